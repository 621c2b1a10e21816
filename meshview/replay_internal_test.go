package meshview

import (
	"fmt"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
)

// replayJobs returns n finished jobs one second apart from t0, each one
// task of the pair where only "good" submits (so "flaky" times out) when
// the bit of flaky's turn is set in timeouts, else both submit.
func replayJobs(t0 time.Time, timeouts []bool) []*finishedJob {
	pair := []string{"flaky", "good"}
	var out []*finishedJob
	for i, late := range timeouts {
		subs := pair
		if late {
			subs = []string{"good"}
		}
		out = append(out, &finishedJob{
			id:    jobs.ID{byte(i)},
			at:    t0.Add(time.Duration(i) * time.Second),
			tasks: []dispatch.TaskOutcome{{TaskID: fmt.Sprint("t", i), Assigned: pair, Commits: subs, Disclosures: subs}},
		})
	}
	return out
}

// TestReplayRejoin: a processor kicked for its timeouts rejoins when it
// advertises a start after its kick; after one normal task it is back, its
// old timeouts forgotten. A start before the kick, or none, leaves it out.
func TestReplayRejoin(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	t0 := time.Unix(1_700_000_000, 0)
	// Kicked at job 1 (2 timeouts of the last 3), then one normal task.
	done := replayJobs(t0, []bool{true, true, false})
	kickAt := t0.Add(time.Second)
	for _, tc := range []struct {
		name    string
		started time.Time
		kicked  bool
	}{
		{"never restarted", time.Time{}, true},
		{"started before the kick", kickAt.Add(-time.Millisecond), true},
		{"restarted after the kick", kickAt.Add(time.Millisecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := map[string]time.Time{"flaky": tc.started}
			r, err := replay(cfg, replayOrder(done, nil), started)
			l, kicks, tasks := r.ledger, r.kicks, r.tasks
			if err != nil || tasks != 3 {
				t.Fatalf("%d tasks, %v", tasks, err)
			}
			_, inLedger := l.Kicked("flaky")
			k, inKicks := kicks["flaky"]
			if inLedger != tc.kicked || inKicks != tc.kicked {
				t.Fatalf("kicked in ledger %v, in view %v; want %v", inLedger, inKicks, tc.kicked)
			}
			// Kicked since the verdict of the job that did it; its 2
			// timeouts still in the window.
			if tc.kicked && (!k.At.Equal(kickAt) || l.Timeouts("flaky") != 2) {
				t.Fatalf("kicked at %v with %d timeouts, want %v and 2", k.At, l.Timeouts("flaky"), kickAt)
			}
			if !tc.kicked && l.Timeouts("flaky") != 0 {
				t.Fatalf("rejoined with %d timeouts, want 0", l.Timeouts("flaky"))
			}
			if !tc.kicked && l.NodeScore("flaky") != 2*float64(cfg.RoundScores[0]) {
				t.Fatalf("rejoined history %v, want only the task after the restart", l.NodeScore("flaky"))
			}
		})
	}
	// Rejoined, one more timeout is not enough to kick it again: the old
	// ones are gone.
	more := replayJobs(t0, []bool{true, true, false, true})
	if r, _ := replay(cfg, replayOrder(more, nil), map[string]time.Time{"flaky": kickAt.Add(time.Millisecond)}); len(r.kicks) != 0 {
		t.Fatalf("kicked again by its old history: %v", r.kicks)
	}
	// A restart after the last verdict rejoins it at the end of the replay.
	if r, _ := replay(cfg, replayOrder(done[:2], nil), map[string]time.Time{"flaky": t0.Add(time.Hour)}); len(r.kicks) != 0 {
		t.Fatalf("restarted after the last verdict: still kicked %v", r.kicks)
	}
}
