package processor

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// roundsPlan is a job of 4 blocks in 2 MacroJobs of 2 regular MicroJobs
// and a verifier each.
func roundsPlan(t *testing.T) *jobs.Plan {
	t.Helper()
	plan, err := jobs.SliceChecked(jobtest.Info(1), jobtest.CheckSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Macros) != 2 {
		t.Fatalf("%d MacroJobs", len(plan.Macros))
	}
	return plan
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
