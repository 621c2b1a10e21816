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
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// roundsPlan is a job of 4 blocks in 2 MacroJobs of 2 regular MicroJobs
// and a verifier each.
func roundsPlan(t *testing.T) *jobs.Plan {
	t.Helper()
	plan, err := jobs.Slice(roundsInfo(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Macros) != 2 {
		t.Fatalf("%d MacroJobs", len(plan.Macros))
	}
	return plan
}

// roundsInfo is a valid JobInfo of 4 one-block MicroJobs in 2 MacroJobs;
// seed makes its ID.
func roundsInfo(seed byte) *jobs.JobInfo {
	info := &jobs.JobInfo{
		Code:     jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:     jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: 4 * 64},
		Slicing:  jobs.Slicing{BlockSize: 64, MicroJobs: 2, BlocksPerMicro: 1},
		Seed:     jobs.Seed{seed},
		PriceWei: big.NewInt(5),
		Creator:  jobs.Address{1},
		Deadline: time.Now().Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	return info
}

// TestFinalRounds: the finalizer's rounds order each MacroJob's
// processors by their earliest record (seq, then peer ID), leave out
// records whose MicroJob is not in the MacroJob they name and disclosures
// by processors that did not commit in that MacroJob.
func TestFinalRounds(t *testing.T) {
	plan := roundsPlan(t)
	m0, m1 := plan.Macros[0].Micros, plan.Macros[1].Micros
	recs := finish.NewRecords()
	commit := func(macro uint64, micro jobs.ID, who string, seq uint64) {
		recs.Add(plan.JobID, finish.Part{Rec: crdt.Record{Seq: seq}, Commit: &microjob.Commitment{MacroIndex: macro, MicroID: micro, Processor: who}})
	}
	disclose := func(macro uint64, micro jobs.ID, who string, seq uint64) {
		recs.Add(plan.JobID, finish.Part{Rec: crdt.Record{Seq: seq}, Discl: &microjob.Disclosure{MacroIndex: macro, MicroID: micro, Processor: who}})
	}
	commit(0, m0[0].ID, "b", 50)
	commit(0, m0[1].ID, "b", 5) // b's earliest commitment in MacroJob 0
	commit(0, m0[2].ID, "a", 5) // ties with b: a by peer ID
	commit(0, m0[0].ID, "c", 7)
	commit(0, m1[0].ID, "z", 1) // a MicroJob of MacroJob 1 named under 0
	commit(1, m1[0].ID, "c", 3)
	disclose(0, m0[0].ID, "c", 10)
	disclose(0, m0[2].ID, "a", 12)
	disclose(0, m0[1].ID, "b", 11)
	disclose(0, m0[0].ID, "d", 1) // never committed
	disclose(1, m1[0].ID, "c", 4)
	got := finish.FinalRounds(plan, recs)
	want := []records.RoundOrder{
		{Macro: 0, Commits: []string{"a", "b", "c"}, Disclosures: []string{"c", "b", "a"}},
		{Macro: 1, Commits: []string{"c"}, Disclosures: []string{"c"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rounds %v, want %v", got, want)
	}
}

// TestRoundOrdersBounded: a round keeps the MaxTaskProcessors earliest
// committers, and only their disclosures.
func TestRoundOrdersBounded(t *testing.T) {
	var s finish.RoundSeqs
	n := dispatch.MaxTaskProcessors + 3
	for i := range n {
		who := fmt.Sprintf("p%03d", i)
		s.Commit(4, who, uint64(i))
		s.Disclose(4, who, uint64(2*n-i)) // the last committer discloses first
	}
	got := s.Orders()
	if len(got) != 1 || got[0].Macro != 4 || len(got[0].Commits) != dispatch.MaxTaskProcessors {
		t.Fatalf("rounds %+v", got)
	}
	if got[0].Commits[0] != "p000" || len(got[0].Disclosures) != dispatch.MaxTaskProcessors ||
		got[0].Disclosures[0] != fmt.Sprintf("p%03d", dispatch.MaxTaskProcessors-1) {
		t.Fatalf("commits %v, disclosures %v", got[0].Commits[:3], got[0].Disclosures[:3])
	}
	for _, p := range got[0].Disclosures {
		if !slices.Contains(got[0].Commits, p) {
			t.Fatalf("%s disclosed but was cut from the commitments", p)
		}
	}
}

// TestFactsQoSIgnoresForgedRounds: the records say a committed and
// disclosed before b, and a's verdict says so; b, a processor of the job,
// writes a verdict whose rounds say b was first. Every node's QoS follows
// the verdict that follows from the records, whichever author ranks
// higher, and refuses b's.
func TestFactsQoSIgnoresForgedRounds(t *testing.T) {
	cl := crdttest.New(t, crdttest.Options{Replicas: 2})
	cl.WaitTopicMesh()
	a, b := cl.Replicas[0], cl.Replicas[1]
	now := time.Now()
	dir := staticDirectory{
		{PeerID: a.ID().String(), CardModel: "cpu", VRAMMiB: 1024, Timeout: time.Minute, Updated: now},
		{PeerID: b.ID().String(), CardModel: "cpu", VRAMMiB: 1024, Timeout: time.Minute, Updated: now},
	}
	f := newJobFixture(t, 20)
	f.publish(t, a.Store)
	for m := range f.plan.Macros {
		f.run(t, a.Store, m, false, honestHash, true)
	}
	for m := range f.plan.Macros {
		f.run(t, b.Store, m, true, honestHash, true)
	}
	for _, r := range cl.Replicas {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := r.Store.Query(context.Background(), records.JobKey(f.id()))
			if err != nil || len(recs) != 12 {
				return fmt.Errorf("replica %s holds %d records (%v)", r.ID(), len(recs), err)
			}
			return nil
		})
	}
	honest := f.verdictOf(t, a.Store, testCID(t, "out").String())
	f.putVerdict(t, a.Store, honest)
	forged := f.verdictOf(t, b.Store, testCID(t, "out").String())
	first := []string{b.ID().String(), a.ID().String()}
	for i := range forged.Rounds {
		forged.Rounds[i].Commits, forged.Rounds[i].Disclosures = first, first
	}
	f.putVerdict(t, b.Store, forged)
	for i, r := range cl.Replicas {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := r.Store.Query(context.Background(), records.VerdictPrefix(f.id()))
			if err != nil || len(recs) != 2 {
				return fmt.Errorf("replica %d holds %d verdicts (%v)", i, len(recs), err)
			}
			return nil
		})
		chosen, err := finish.ReadVerdict(context.Background(), r.Store, nil, f.id(), nil)
		if err != nil || chosen.Author != a.ID().String() {
			t.Fatalf("replica %d chose %q's verdict (%v), want a's", i, chosen.Author, err)
		}
		fc, err := NewFacts(FactsParams{Store: r.Store, Directory: dir, Now: func() time.Time { return now }}, DefaultFactsConfig())
		if err != nil {
			t.Fatal(err)
		}
		view, err := fc.View(context.Background(), []jobs.ID{f.id()})
		if err != nil {
			t.Fatal(err)
		}
		pa, _ := view.Processor(a.ID().String())
		pb, _ := view.Processor(b.ID().String())
		if view.Tasks != 2 || pa.SpeedScore != 20 || pb.SpeedScore != 10 {
			t.Fatalf("replica %d: %d tasks, speed a %v b %v; want 2 tasks, a 20, b 10", i, view.Tasks, pa.SpeedScore, pb.SpeedScore)
		}
	}
}
