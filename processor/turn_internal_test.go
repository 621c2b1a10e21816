package processor

import (
	"crypto/sha256"
	"math/big"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
)

// TestTurnSizeFollowsThePaceOfTheJob: a job not run yet starts at
// firstTurn; fast MicroJobs get the whole MaxLocksPerTurn; slow ones no
// more than half a lock's time can run, and never fewer than one.
func TestTurnSizeFollowsThePaceOfTheJob(t *testing.T) {
	w := &Worker{cfg: Config{Room: macrojob.RoomConfig{Queue: macrojob.Config{MaxLocksPerTurn: 10, ProcessingTimeout: time.Minute}}}}
	fast, slow := &jobState{}, &jobState{}
	if got := w.turnSize(fast); got != firstTurn {
		t.Fatalf("a job not run yet: turn %d, want %d", got, firstTurn)
	}
	w.ranFor(fast, 50*time.Millisecond)
	if got := w.turnSize(fast); got != 10 {
		t.Fatalf("50 ms MicroJobs: turn %d, want M = 10", got)
	}
	w.ranFor(slow, 10*time.Second)
	if got := w.turnSize(slow); got != 3 {
		t.Fatalf("10 s MicroJobs with 1m locks: turn %d, want 3", got)
	}
	w.ranFor(slow, 50*time.Second) // average 10·0.7 + 50·0.3 = 22 s
	if got := w.turnSize(slow); got != 1 {
		t.Fatalf("22 s MicroJobs with 1m locks: turn %d, want 1", got)
	}
	w.ranFor(slow, 5*time.Minute)
	if got := w.turnSize(slow); got != 1 {
		t.Fatalf("MicroJobs longer than a lock: turn %d, want 1", got)
	}
	if got := w.turnSize(fast); got != 10 {
		t.Fatalf("another job's pace changed this one's turn to %d", got)
	}
}

// TestTurnsShrinkAsTheJobEnds: a turn is at most this processor's share
// of the MicroJobs left, ⌈left ÷ P⌉.
func TestTurnsShrinkAsTheJobEnds(t *testing.T) {
	_, plan := byteJob(t, 400, 10, jobs.Requirements{})
	if plan.NumMicroJobs() != 440 {
		t.Fatalf("plan has %d MicroJobs, want 40 × 11", plan.NumMicroJobs())
	}
	w := &Worker{cfg: Config{Room: macrojob.RoomConfig{Queue: macrojob.Config{MaxLocksPerTurn: 10, ProcessingTimeout: time.Minute}}}}
	js := (&jobState{eligible: 4}).withPlan(plan)
	w.ranFor(js, 50*time.Millisecond)
	for _, c := range []struct{ done, want int }{{0, 10}, {360, 10}, {400, 10}, {410, 8}, {420, 5}, {436, 1}, {440, 1}} {
		js.doneMap = map[jobs.ID]bool{}
		for i := range c.done {
			js.doneMap[plan.Macros[i/11].Micros[i%11].ID] = true
		}
		if got := w.turnSize(js); got != c.want {
			t.Errorf("%d of 440 done, 4 processors: turn %d, want %d", c.done, got, c.want)
		}
	}
}

// byteJob is a sliced job of size one-byte blocks with micros regular
// MicroJobs per MacroJob and requirements req; its code and data are
// never fetched.
func byteJob(t *testing.T, size uint64, micros uint32, req jobs.Requirements) (*jobs.JobInfo, *jobs.Plan) {
	t.Helper()
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "file:///c", SHA256: sha256.Sum256([]byte("c"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "file:///d", SHA256: sha256.Sum256([]byte("d"))}, Size: size},
		Slicing:        jobs.Slicing{BlockSize: 1, MicroJobs: micros, BlocksPerMicro: 1},
		SeedCommitment: sha256.Sum256([]byte("s")),
		PriceWei:       big.NewInt(1),
		Creator:        jobs.Address{1},
		Deadline:       2_000_000_000,
		Output:         jobs.Output{Kind: jobs.OutputConcat},
		Requirements:   req,
	}
	info.ApplyDefaults()
	plan, err := jobs.SliceChecked(info, jobs.Seed{0xc1})
	if err != nil {
		t.Fatal(err)
	}
	return info, plan
}
