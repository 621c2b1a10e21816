package disclosure

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// testJobs answers Progress from fixed snapshots: a job in progress is
// followed, one in failing cannot be read, any other is not followed.
type testJobs struct {
	plan     *jobs.Plan
	progress map[jobs.ID]finish.Progress
	failing  map[jobs.ID]bool
}

func (j testJobs) Progress(_ context.Context, id jobs.ID) (finish.Progress, *jobs.Plan, bool, error) {
	if j.failing[id] {
		return finish.Progress{}, nil, true, errors.New("index closed")
	}
	p, ok := j.progress[id]
	return p, j.plan, ok, nil
}

// testPlan is a job of two MacroJobs of two MicroJobs each; every job ID
// of the tests shares it.
func testPlan() *jobs.Plan {
	plan := &jobs.Plan{}
	for m := range 2 {
		macro := jobs.MacroJob{Index: uint64(m), Regular: 1}
		for s := range 2 {
			macro.Micros = append(macro.Micros, jobs.MicroJob{ID: sha256.Sum256(fmt.Appendf(nil, "%d/%d", m, s)), Macro: uint64(m), Slot: s})
		}
		plan.Macros = append(plan.Macros, macro)
	}
	return plan
}

var (
	jobA = jobs.ID(sha256.Sum256([]byte("a")))
	jobB = jobs.ID(sha256.Sum256([]byte("b")))
)

// disclosures are this node's disclosures of MacroJob m of job id.
func disclosures(plan *jobs.Plan, id jobs.ID, m int) []microjob.Disclosure {
	var ds []microjob.Disclosure
	for _, mu := range plan.Macros[m].Micros {
		ds = append(ds, microjob.Disclosure{JobID: id, MacroIndex: uint64(m), MicroID: mu.ID, Processor: "self"})
	}
	return ds
}

// committed is a progress in which the MicroJobs at the given (MacroJob,
// slot) pairs have a commitment by each of by.
func committed(plan *jobs.Plan, replicas int, by []string, at ...[2]int) finish.Progress {
	c := map[jobs.ID][]string{}
	for _, ms := range at {
		c[plan.Macros[ms[0]].Micros[ms[1]].ID] = by
	}
	return finish.NewProgress(c, 0).WithReplicas(replicas)
}

// TestSplit: a disclosure is due once each MicroJob of its MacroJob is
// fully committed, counting those about to be committed with it in a job
// of one replica only; a job not followed any more drops its disclosures,
// one whose progress cannot be read keeps them.
func TestSplit(t *testing.T) {
	plan := testPlan()
	one := []string{"self"}
	last := map[jobs.ID]bool{plan.Macros[0].Micros[1].ID: true}
	for _, c := range []struct {
		name      string
		progress  finish.Progress
		failing   bool
		also      map[jobs.ID]bool
		due, kept int // of MacroJob 0's two disclosures
	}{
		{"fully committed", committed(plan, 1, one, [2]int{0, 0}, [2]int{0, 1}), false, nil, 2, 0},
		{"one MicroJob without a commitment", committed(plan, 1, one, [2]int{0, 0}), false, nil, 0, 2},
		{"its last commitment in the same batch", committed(plan, 1, one, [2]int{0, 0}), false, last, 2, 0},
		{"a group job one committer short", committed(plan, 2, one, [2]int{0, 0}, [2]int{0, 1}), false, nil, 0, 2},
		{"a group job's batch does not make R", committed(plan, 2, []string{"p", "q"}, [2]int{0, 0}), false, last, 0, 2},
		{"a group job with R committers", committed(plan, 2, []string{"p", "q"}, [2]int{0, 0}, [2]int{0, 1}), false, nil, 2, 0},
		{"progress unreadable", finish.Progress{}, true, nil, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := testJobs{plan: plan, progress: map[jobs.ID]finish.Progress{jobA: c.progress}, failing: map[jobs.ID]bool{jobA: c.failing}}
			// MacroJob 1 is never committed; job B is not followed.
			ds := slices.Concat(disclosures(plan, jobA, 0), disclosures(plan, jobA, 1), disclosures(plan, jobB, 0))
			r := &Round{ctx: context.Background(), jobs: js, also: c.also}
			due, later := r.Split(ds)
			if len(due) != c.due || len(later) != c.kept+2 {
				t.Fatalf("due %d, kept %d; want %d due, %d kept (and MacroJob 1's 2)", len(due), len(later), c.due, c.kept+2)
			}
			for _, d := range due {
				if d.JobID != jobA || d.MacroIndex != 0 {
					t.Fatalf("due: %+v", d)
				}
			}
			for _, d := range later {
				if d.JobID == jobB {
					t.Fatal("a job not followed keeps its disclosures")
				}
			}
		})
	}
}

// TestHold: while a turn runs, a due disclosure waits for it Hold (at
// most MaxHold), and longer while the turn is expected to go on (its
// MicroJobs at the job's pace, and half again), but never beyond
// MaxTurnHold; with no turn running it is due at once.
func TestHold(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	ms := time.Millisecond
	for _, c := range []struct {
		name       string
		hold       time.Duration
		turn       bool
		n          int
		per        time.Duration
		held, sent time.Duration // the last time it is held, the first it is due
	}{
		{"no turn running", 200 * ms, false, 0, 0, -1, 0},
		{"a turn of unknown pace", 200 * ms, true, 3, 0, 199 * ms, 200 * ms},
		{"a turn of ten 100 ms MicroJobs", 200 * ms, true, 10, 100 * ms, 1499 * ms, 1500 * ms},
		{"a turn expected to run for minutes", 200 * ms, true, 100, time.Second, MaxTurnHold - ms, MaxTurnHold},
		{"a slow Poll holds at most MaxHold", time.Minute, true, 0, 0, MaxHold - ms, MaxHold},
		{"no hold", 0, true, 0, 0, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := testPlan()
			js := testJobs{plan: plan, progress: map[jobs.ID]finish.Progress{jobA: committed(plan, 1, []string{"self"}, [2]int{0, 0}, [2]int{0, 1})}}
			p := &Pending{Hold: c.hold}
			p.Add(disclosures(plan, jobA, 0)...)
			if c.turn {
				p.StartTurn(t0, c.n, c.per)
			}
			due := func(at time.Duration) int {
				r := p.Begin(context.Background(), js, nil)
				r.HoldFor(t0.Add(at))
				n := len(r.Due)
				r.End(false)
				return n
			}
			if c.held >= 0 {
				if n := due(0); n != 0 {
					t.Fatalf("%d due at once, want them held", n)
				}
				if n := due(c.held); n != 0 {
					t.Fatalf("%d due %s into the turn, want them held", n, c.held)
				}
			}
			if n := due(c.sent); n != 2 {
				t.Fatalf("%d due %s into the turn, want 2", n, c.sent)
			}
		})
	}
}

// TestRound: what a round does not write stays pending, with what came in
// meanwhile; what it writes leaves no hold behind, and a turn that ends
// with disclosures held for it says so.
func TestRound(t *testing.T) {
	plan := testPlan()
	js := testJobs{plan: plan, progress: map[jobs.ID]finish.Progress{jobA: committed(plan, 1, []string{"self"}, [2]int{0, 0}, [2]int{0, 1})}}
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	p := &Pending{Hold: time.Second}
	p.Add(disclosures(plan, jobA, 0)...)
	p.StartTurn(t0, 1, 0)
	r := p.Begin(ctx, js, nil)
	p.Add(disclosures(plan, jobA, 1)...) // a turn's, while the round runs
	r.HoldFor(t0)
	if len(r.Due) != 0 {
		t.Fatalf("%d due while a turn runs, want them held", len(r.Due))
	}
	r.End(false)
	if n := p.Len(); n != 4 {
		t.Fatalf("%d pending, want the 2 held and the 2 added", n)
	}
	if !p.EndTurn() {
		t.Fatal("the turn ended without saying disclosures wait for it")
	}
	r = p.Begin(ctx, js, nil)
	r.HoldFor(t0)
	if len(r.Due) != 2 {
		t.Fatalf("%d due with no turn running, want 2", len(r.Due))
	}
	r.End(false) // the write failed
	if n := p.Len(); n != 4 {
		t.Fatalf("%d pending after a failed write, want 4", n)
	}
	r = p.Begin(ctx, js, nil)
	r.End(true)
	if n := p.Len(); n != 2 {
		t.Fatalf("%d pending after the write, want MacroJob 1's 2", n)
	}
	p.StartTurn(t0, 1, 0)
	if p.EndTurn() {
		t.Fatal("hold times left for written disclosures")
	}
	if es := Entries(disclosures(plan, jobA, 0)); len(es) != 2 || es[0].Key == es[1].Key {
		t.Fatalf("entries: %+v", es)
	}
}
