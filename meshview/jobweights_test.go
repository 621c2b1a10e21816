package meshview

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
)

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

// modelView builds a view through Facts from ads, then marks kicked
// processors kicked out as the QoS ledger would.
func modelView(t testing.TB, ads []Advertised, kicked ...string) *View {
	t.Helper()
	now := time.Now()
	for i := range ads {
		ads[i].Updated, ads[i].Timeout = now, time.Minute
		if ads[i].CardModel == "" {
			ads[i].CardModel = "cpu"
		}
	}
	f, err := NewFacts(FactsParams{Store: noRecords{}, Directory: staticDirectory(ads), Now: func() time.Time { return now }}, DefaultFactsConfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.View(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range kicked {
		i := v.byID[id]
		k := dispatch.Kick{Node: id, Reason: dispatch.KickTimeouts}
		v.Processors[i].Kick, v.Processors[i].Weight = &k, 0
		v.kicks[id] = k
	}
	return v
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// TestJobWeightsLocality: a job's weights narrow to the candidates that
// hold all its models and boost them by M = 1 + 0.7·local/total; without
// a holder among the candidates every candidate keeps its boosted weight,
// a processor that is not live weighs the lightest live weight, and a
// kicked-out one 0 even when it holds the models.
func TestJobWeightsLocality(t *testing.T) {
	v := modelView(t, []Advertised{
		{PeerID: "a", Models: []string{"m1", "m2"}},
		{PeerID: "b", Models: []string{"m1"}},
		{PeerID: "c"},
		{PeerID: "d", Models: []string{"m1", "m2"}},
	}, "d")
	base := v.Weight("c")
	if base <= 0 || v.Weight("a") != base || v.Weight("b") != base {
		t.Fatalf("job-independent weights: a %v b %v c %v", v.Weight("a"), v.Weight("b"), v.Weight("c"))
	}
	job := dispatch.Job{ID: "j", Models: []string{"m2", "m1"}}

	got := v.JobWeights(job, []string{"a", "b", "c", "d", "x"})
	if !near(got[0], 1.7*base) || got[1] != 0 || got[2] != 0 || got[3] != 0 || got[4] != 0 {
		t.Fatalf("narrowed to the holder: %v (base %v)", got, base)
	}
	for s := range 100 {
		if i, ok := v.Pick(job, []string{"b", "a", "c", "x"}, dispatch.Seed([]byte{byte(s)})); !ok || i != 1 {
			t.Fatalf("seed %d picked %d (%v), want the holder", s, i, ok)
		}
	}

	// No live holder among the candidates: boosted weights, no narrowing.
	got = v.JobWeights(job, []string{"b", "c", "x", "d"})
	if !near(got[0], 1.35*base) || !near(got[1], base) || !near(got[2], base) || got[3] != 0 {
		t.Fatalf("without a holder: %v (base %v)", got, base)
	}
	// Nobody anywhere holds the models: M = 1 for all, the fallback.
	none := dispatch.Job{ID: "k", Models: []string{"m9"}}
	if got := v.JobWeights(none, []string{"a", "b", "c"}); !slices.Equal(got, []float64{base, base, base}) {
		t.Fatalf("models nobody holds: %v", got)
	}
	// Without models: the job-independent weights.
	if got := v.JobWeights(dispatch.Job{}, []string{"a", "d", "x"}); !slices.Equal(got, []float64{base, 0, base}) {
		t.Fatalf("no models: %v", got)
	}
	// A nil view weighs everyone alike.
	if got := (*View)(nil).JobWeights(job, []string{"a", "b"}); !slices.Equal(got, []float64{1, 1}) {
		t.Fatalf("nil view: %v", got)
	}
	// The cached answer is the computed one.
	if again := v.JobWeights(job, []string{"a", "b", "c", "d", "x"}); !near(again[0], 1.7*base) || again[1] != 0 {
		t.Fatalf("cached: %v", again)
	}
}

// TestJobWeightsHoldersWithoutWeight: when the only holders weigh 0 (no
// stake), the job's choices fall back to every candidate rather than
// stall.
func TestJobWeightsHoldersWithoutWeight(t *testing.T) {
	v := modelView(t, []Advertised{{PeerID: "a", Models: []string{"m"}}, {PeerID: "b"}, {PeerID: "c"}})
	i := v.byID["a"]
	v.Processors[i].Stake = new(big.Int)
	v.jobs = newJobCache()
	got := v.JobWeights(dispatch.Job{Models: []string{"m"}}, []string{"a", "b", "c"})
	if got[0] != 0 || got[1] <= 0 || got[1] != got[2] {
		t.Fatalf("holder without stake: %v", got)
	}
}

// TestPreDownloadsAgreeAcrossViews: two nodes that read the same
// advertisements in different orders name the same processors to fetch a
// rare model; holders, ineligible and kicked-out processors are never
// named, and a well-held model names nobody.
func TestPreDownloadsAgreeAcrossViews(t *testing.T) {
	var ads []Advertised
	for i := range 9 {
		a := Advertised{PeerID: fmt.Sprintf("p%d", i), VRAMMiB: 16384}
		if i == 0 {
			a.Models = []string{"rare", "common"}
		}
		if i == 1 || i == 2 {
			a.Models = []string{"common"}
		}
		if i == 8 {
			a.VRAMMiB = 1024 // too small for the job
		}
		ads = append(ads, a)
	}
	rev := slices.Clone(ads)
	slices.Reverse(rev)
	v1, v2 := modelView(t, ads, "p5"), modelView(t, rev, "p5")
	cfg := dispatch.DefaultConfig()
	job := dispatch.Job{ID: "j", MinVRAM: 8192, Models: []string{"rare", "common"}}
	named := map[string]bool{}
	for s := range 20 {
		seed := []byte{byte(s)}
		a, err := v1.PreDownloads(cfg, job, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, err := v2.PreDownloads(cfg, job, seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != 1 || a[0].Model != "rare" || len(a[0].Nodes) != 2 {
			t.Fatalf("seed %d: %+v", s, a)
		}
		if len(b) != 1 || !slices.Equal(a[0].Nodes, b[0].Nodes) {
			t.Fatalf("seed %d: views disagree: %v vs %+v", s, a[0].Nodes, b)
		}
		for _, id := range a[0].Nodes {
			if id == "p0" || id == "p5" || id == "p8" {
				t.Fatalf("seed %d named %s", s, id)
			}
			named[id] = true
		}
	}
	if len(named) < 3 {
		t.Fatalf("20 seeds named only %v", named)
	}
	if pd, err := v1.PreDownloads(cfg, dispatch.Job{ID: "j", Models: []string{"common"}}, nil); err != nil || len(pd) != 0 {
		t.Fatalf("well-held model: %+v, %v", pd, err)
	}
	if pd, err := v1.PreDownloads(cfg, dispatch.Job{ID: "j"}, nil); err != nil || pd != nil {
		t.Fatalf("no models: %+v, %v", pd, err)
	}
}
