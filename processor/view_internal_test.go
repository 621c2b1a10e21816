package processor

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
)

// staticDirectory is a fixed list of advertisements.
type staticDirectory []meshview.Advertised

func (d staticDirectory) Processors(context.Context) ([]meshview.Advertised, error) { return d, nil }

// noRecords is a store without job records: views over it have no
// finished job to replay, so every processor has the new-node QoS.
type noRecords struct{}

func (noRecords) Get(context.Context, string) (crdt.Record, error) {
	return crdt.Record{}, crdt.ErrNotFound
}
func (noRecords) Query(context.Context, string) ([]crdt.Record, error) { return nil, nil }
func (noRecords) QueryKeys(context.Context, string, func(string) bool) ([]crdt.Record, error) {
	return nil, nil
}

// modelView builds a view through meshview.Facts from ads, then marks
// kicked processors kicked out as the QoS ledger would.
func modelView(t testing.TB, ads []meshview.Advertised, kicked ...string) *meshview.View {
	t.Helper()
	now := time.Now()
	for i := range ads {
		ads[i].Updated, ads[i].Timeout = now, time.Minute
		if ads[i].CardModel == "" {
			ads[i].CardModel = "cpu"
		}
	}
	f, err := meshview.NewFacts(meshview.FactsParams{Store: noRecords{}, Directory: staticDirectory(ads), Now: func() time.Time { return now }}, meshview.DefaultFactsConfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.View(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kicks []dispatch.Kick
	for _, id := range kicked {
		kicks = append(kicks, dispatch.Kick{Node: id, Reason: dispatch.KickTimeouts})
	}
	return meshview.NewView(v.At, v.Processors, kicks...)
}

// modelJob is a job of 8 MacroJobs needing models.
func modelJob(t *testing.T, models ...string) *jobState {
	t.Helper()
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: 64 * 64},
		Slicing:        jobs.Slicing{BlockSize: 64, MicroJobs: 8, BlocksPerMicro: 1},
		SeedCommitment: sha256.Sum256([]byte("model job")),
		PriceWei:       big.NewInt(5),
		Creator:        jobs.Address{1},
		Deadline:       time.Now().Add(time.Hour).Unix(),
		Requirements:   jobs.Requirements{ModelCIDs: models},
	}
	info.ApplyDefaults()
	plan, err := jobs.SliceChecked(info, jobs.Seed{0xc1})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Macros) < 8 {
		t.Fatalf("%d MacroJobs", len(plan.Macros))
	}
	return (&jobState{info: info}).withPlan(plan)
}

// TestFirstOwnersNarrowToHolders: with holders of the job's models among
// the live eligible processors, every MacroJob's first owner is a holder;
// without models, or when nobody holds them, owners are drawn from all.
func TestFirstOwnersNarrowToHolders(t *testing.T) {
	const model = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	var ads []meshview.Advertised
	for i := range 8 {
		a := meshview.Advertised{PeerID: fmt.Sprintf("p%d", i)}
		if i == 3 || i == 6 {
			a.Models = []string{model}
		}
		ads = append(ads, a)
	}
	v := modelView(t, ads)
	owners := func(self string, js *jobState) []string {
		w := &Worker{self: self}
		w.dview.Store(v)
		return w.firstOwners(js)
	}
	withModel := modelJob(t, model)
	for _, self := range []string{"p0", "p3", "p7"} {
		for i, o := range owners(self, withModel) {
			if o != "p3" && o != "p6" {
				t.Fatalf("self %s: MacroJob %d's first owner %s holds no model", self, i, o)
			}
		}
	}
	if !slices.Equal(owners("p0", withModel), owners("p6", withModel)) {
		t.Fatal("processors disagree on the first owners")
	}
	for _, js := range []*jobState{modelJob(t), modelJob(t, "bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq")} {
		got := owners("p0", js)
		if !slices.ContainsFunc(got, func(o string) bool { return o != "p3" && o != "p6" }) {
			t.Fatalf("models %v: owners %v are all holders", js.info.Requirements.ModelCIDs, got)
		}
	}
	// With one holder kicked out, the other opens every room; with both,
	// nobody is narrowed to.
	v = modelView(t, ads, "p6")
	if got := owners("p0", modelJob(t, model)); slices.ContainsFunc(got, func(o string) bool { return o != "p3" }) {
		t.Fatalf("one holder kicked out: owners %v", got)
	}
	v = modelView(t, ads, "p3", "p6")
	if got := owners("p0", modelJob(t, model)); !slices.ContainsFunc(got, func(o string) bool { return o != "p3" && o != "p6" }) {
		t.Fatalf("both holders kicked out: owners %v", got)
	}
}
