package processor_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/records"
)

// TestColludingLiarsFrameNobody: two of eight processors give one
// identical wrong output for every block they run, re-runs included (the
// demo's --byzantine 2). A majority of three would convict the honest
// side of a dispute whenever its third is the other liar; the escalated
// vote does not: some liar is named culprit (unless every liar's result
// was checked by the other liar, whose identical lie passes: the collusion
// bound) and no honest processor is,
// in any judgement of the records before the verdict nor in the verdict,
// and the job completes with the right output: a MicroJob one liar redoes
// for the other, with its own lie, is redone again once it too is named.
func TestColludingLiarsFrameNobody(t *testing.T) {
	liars := []int{2, 5}
	var m *localmesh.Mesh
	m = flowMesh(t, 8, liarTune(&m, liars...))
	var liarIDs []string
	for _, i := range liars {
		liarIDs = append(liarIDs, m.Members[i].Host.ID().String())
	}
	job := newMandelbrot(t, 192, 160, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client(m)
	info, plan := submitPlan(t, ctx, m, job.spec(3, 4))
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
	if waitErr != nil {
		t.Fatalf("no verdict within the deadline: %v", waitErr)
	}
	if len(caught) == 0 {
		// A liar drawn to verify its partner's blocks repeats the same
		// wrong hash, and the lie passes: the collusion bound. Any liar's
		// block an honest verifier checked must have named it.
		if p := honestlyChecked(t, info, res, liarIDs); p != "" {
			t.Fatalf("no liar was caught, yet %s's results were checked by an honest verifier", p)
		}
		t.Log("no liar was caught: every liar's result was checked by a liar")
	}
	checkComplete(t, info, res)
	if !slices.Equal(res.Culprits, caught) {
		t.Fatalf("verdict culprits %v, judged %v", res.Culprits, caught)
	}
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
}

// honestlyChecked returns a liar whose regular result in res's verdict
// has a block that a verifier run by an honest processor checked, or ""
// when there is none.
func honestlyChecked(t *testing.T, info *jobs.JobInfo, res dapp.Result, liars []string) string {
	t.Helper()
	seed, err := jobs.ParseHash(res.Verdict.CheckSeed)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := jobs.SliceChecked(info, seed)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string][]string{} // MicroJob → processors with a result
	for _, r := range res.Verdict.Results {
		ran[r.MicroID] = append(ran[r.MicroID], r.Processor)
	}
	for _, mac := range plan.Macros {
		ver := mac.Verifier()
		honestVerifier := slices.ContainsFunc(ran[ver.ID.String()], func(p string) bool { return !slices.Contains(liars, p) })
		if !honestVerifier {
			continue
		}
		for _, src := range ver.Sources {
			for _, p := range ran[mac.Micros[src.Slot].ID.String()] {
				if slices.Contains(liars, p) {
					return p
				}
			}
		}
	}
	return ""
}
