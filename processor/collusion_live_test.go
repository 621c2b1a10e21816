package processor_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestColludingLiarsFrameNobody: two of eight processors give one
// identical wrong output for every block they run, re-runs included (the
// demo's --byzantine 2). A majority of three would convict the honest
// side of a dispute whenever its third is the other liar; the escalated
// vote does not: some liar is named culprit and no honest processor is,
// in any judgement of the records before the verdict nor in the verdict,
// and the job completes with the right output: a MicroJob one liar redoes
// for the other, with its own lie, is redone again once it too is named.
func TestColludingLiarsFrameNobody(t *testing.T) {
	liars := []int{2, 5}
	var m *localmesh.Mesh
	m = flowMesh(t, 8, func(mem *localmesh.Member, pc *processor.Config) {
		if slices.Contains(liars, mem.Index) {
			pc.Tamper = func(_ uint64, _ bool, out []byte) []byte { return append(out, 0xff) }
			return
		}
		// The honest processors hold their first MicroJob until a liar
		// has committed one, so that a liar surely takes part; the other
		// may, and re-runs with the same wrong output when drawn.
		first := true
		pc.Hold = func(ctx context.Context, _ jobs.ID) {
			if !first {
				return
			}
			first = false
			_ = waitFor(ctx, func() bool {
				recs, err := mem.Store.Query(ctx, "/jobs")
				if err != nil {
					return false
				}
				return slices.ContainsFunc(recs, func(r crdt.Record) bool {
					return r.Type == records.CommitType && slices.ContainsFunc(liars, func(i int) bool {
						return m.Members[i].Host.ID() == r.Author
					})
				})
			})
		}
	})
	var liarIDs []string
	for _, i := range liars {
		liarIDs = append(liarIDs, m.Members[i].Host.ID().String())
	}
	job := newMandelbrot(t, 192, 160, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client(m)
	info, err := c.DApp.Submit(ctx, job.spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	// Every judgement of the client's store names only liars, until the
	// verdict.
	var caught []string
	var res dapp.Result
	verdict := false
	waitErr := waitFor(ctx, func() bool {
		rs, err := c.Store.Query(ctx, records.JobKey(info.ID())+"/")
		if err != nil {
			return false
		}
		recs := finish.FromRecords(info.ID(), rs)
		checked, err := finish.CheckedPlan(plan, finish.ChooseChecks(info, plan, recs, finish.ProgressOf(recs, 1), 0, time.Hour))
		if err != nil {
			return false // the checks are not drawn yet
		}
		j, err := finish.Judge(info, checked, recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range j.Culprits {
			if !slices.Contains(liarIDs, p) {
				t.Fatalf("an honest processor %s is a culprit (liars %v); resolutions %+v", p, liarIDs, j.V.Resolutions)
			}
		}
		caught = j.Culprits
		res, verdict, _ = c.DApp.Status(ctx, info.ID())
		return verdict
	})
	t.Logf("culprits %v", caught)
	if len(caught) == 0 {
		t.Fatal("no liar was caught")
	}
	if waitErr != nil {
		t.Fatalf("no verdict within the deadline: %v", waitErr)
	}
	checkComplete(t, info, res)
	if !slices.Equal(res.Culprits, caught) {
		t.Fatalf("verdict culprits %v, judged %v", res.Culprits, caught)
	}
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
}
