package processor

import (
	"log/slog"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobs"
)

// TestCatchUpHoldsReplicaJobs: a job found in the node's own replica
// while it catches up after a start is not worked until a peer announces
// it open or the catch-up ends (its verdict may not have arrived yet); a
// job announced, or learned after the catch-up, is worked at once.
func TestCatchUpHoldsReplicaJobs(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	now := start
	cfg := DefaultConfig()
	cfg.CatchUp = 10 * time.Second
	w := &Worker{
		cfg:       cfg,
		p:         Params{Now: func() time.Time { return now }},
		startedAt: start,
		known:     map[jobs.ID]*jobState{},
		wake:      make(chan struct{}, 1),
		log:       slog.New(slog.DiscardHandler),
	}
	fromReplica, announced, later := jobtest.Info(1), jobtest.Info(2), jobtest.Info(3)
	w.learn(fromReplica, false)
	w.learn(announced, true)
	worked := func() map[jobs.ID]bool {
		got := map[jobs.ID]bool{}
		for _, js := range w.candidates(now) {
			got[js.plan.JobID] = true
		}
		return got
	}
	if got := worked(); got[fromReplica.ID()] || !got[announced.ID()] {
		t.Fatalf("while catching up: worked %v; want the announced job only", got)
	}

	now = start.Add(10 * time.Second)
	w.learn(later, false)
	if got := worked(); !got[fromReplica.ID()] || !got[later.ID()] {
		t.Fatalf("after the catch-up: worked %v; want every job", got)
	}

	// A peer's announcement ends the wait before the catch-up does.
	now = start
	w.known = map[jobs.ID]*jobState{}
	w.learn(fromReplica, false)
	w.learn(fromReplica, true)
	if got := worked(); !got[fromReplica.ID()] {
		t.Fatalf("announced by a peer: worked %v", got)
	}
}
