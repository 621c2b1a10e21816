package processor

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/p2p/p2ptest"
	"github.com/jobmesh/jobmesh/records"
)

// TestCatchUpHoldsReplicaJobs: a job found in the node's own replica
// while it catches up after a start is not worked, nor are its re-run and
// redo requests, until a peer announces it open or the catch-up ends (its
// verdict may not have arrived yet); a job announced, or learned after
// the catch-up, is worked at once.
func TestCatchUpHoldsReplicaJobs(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	now := start
	w := catchingUp(start, &now)
	w.index = jobindex.New(nil)
	fromReplica, announced, later := jobtest.Info(1), jobtest.Info(2), jobtest.Info(3)
	w.learn(fromReplica, false)
	w.learn(announced, true)
	worked := func() map[jobs.ID]bool {
		got := map[jobs.ID]bool{}
		for _, js := range w.candidates(now) {
			got[js.plan().JobID] = true
		}
		return got
	}
	if got := worked(); got[fromReplica.ID()] || !got[announced.ID()] {
		t.Fatalf("while catching up: worked %v; want the announced job only", got)
	}
	for _, k := range []int{rerunPass, redoPass} {
		if w.requestPass(w.known[fromReplica.ID()], k) || !w.requestPass(w.known[announced.ID()], k) {
			t.Fatalf("while catching up, requests of kind %d: passes over the replica's job or none over the announced one", k)
		}
	}

	now = start.Add(10 * time.Second)
	w.learn(later, false)
	if got := worked(); !got[fromReplica.ID()] || !got[later.ID()] {
		t.Fatalf("after the catch-up: worked %v; want every job", got)
	}
	if !w.requestPass(w.known[fromReplica.ID()], rerunPass) {
		t.Fatal("after the catch-up: no pass over the replica's job's re-run requests")
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

// catchingUp is a worker started at start that catches up for 10 s, its
// clock reading *now.
func catchingUp(start time.Time, now *time.Time) *Worker {
	cfg := DefaultConfig()
	cfg.CatchUp = 10 * time.Second
	return &Worker{
		cfg:      cfg,
		p:        Params{Now: func() time.Time { return *now }},
		caughtUp: start.Add(cfg.CatchUp),
		known:    map[jobs.ID]*jobState{},
		wake:     make(chan struct{}, 1),
		log:      slog.New(slog.DiscardHandler),
	}
}

// joins records the job stores a worker joins.
type joins struct {
	mu  sync.Mutex
	ids []jobs.ID
}

func (j *joins) Join(_ context.Context, id jobs.ID) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.ids = append(j.ids, id)
	return nil
}

func (j *joins) Holds(id jobs.ID) bool { return j.has(id) }

func (j *joins) has(id jobs.ID) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Contains(j.ids, id)
}

// TestCatchUpDefersJoins: a job found in the replica while the worker
// catches up is joined only once a peer announces it open, or once the
// catch-up is over and the mesh store holds no outcome summary of it; a
// new node skips summarized jobs of the store at once: neither fetches a
// settled job's records. An announced job is joined whatever the store
// says.
func TestCatchUpDefersJoins(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	store := c.Replicas[0].Store
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	now := start
	cfg := DefaultConfig()
	cfg.CatchUp = 10 * time.Second
	j := &joins{}
	w := &Worker{
		cfg:      cfg,
		p:        Params{Store: store, Jobs: j, Now: func() time.Time { return now }},
		caughtUp: start.Add(cfg.CatchUp),
		known:    map[jobs.ID]*jobState{},
		wake:     make(chan struct{}, 1),
		log:      slog.New(slog.DiscardHandler),
		runCtx:   ctx,
	}
	open, settled, announced := jobtest.Info(1), jobtest.Info(2), jobtest.Info(3)
	for _, id := range []jobs.ID{settled.ID(), announced.ID()} {
		if err := store.Put(ctx, records.SummaryKey(id, store.Self().String()), records.SummaryType, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, info := range []*jobs.JobInfo{open, settled, announced} {
		w.learn(info, false)
	}
	w.learn(announced, true)
	w.wg.Wait()
	if j.has(open.ID()) || j.has(settled.ID()) || !j.has(announced.ID()) {
		t.Fatalf("while catching up joined %v; want the announced job only", j.ids)
	}

	now = start.Add(cfg.CatchUp)
	w.candidates(now)
	w.wg.Wait()
	if !j.has(open.ID()) || j.has(settled.ID()) {
		t.Fatalf("after the catch-up joined %v; want the open job, not the settled one", j.ids)
	}

	// A new node (no catch-up) reading the mesh's history skips a
	// settled job too.
	w.known, w.caughtUp, j.ids = map[jobs.ID]*jobState{}, start, nil
	w.learn(settled, false)
	w.learn(open, false)
	w.wg.Wait()
	if !j.has(open.ID()) || j.has(settled.ID()) {
		t.Fatalf("a new node joined %v; want the open job, not the settled one", j.ids)
	}
}

// TestCatchUpAsksAgain: while a job learned from the node's own replica
// waits out the catch-up, the worker asks the Jobs channel for open jobs
// again every queryEvery (its query at start may have reached nobody);
// not more often, and not once nothing waits.
func TestCatchUpAsksAgain(t *testing.T) {
	h := p2ptest.Hosts(t, 1)[0]
	topic, err := jobs.JoinJobsTopic(h)
	if err != nil {
		t.Fatal(err)
	}
	defer topic.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	start := time.Unix(1_700_000_000, 0)
	now := start
	w := catchingUp(start, &now)
	w.topic = topic
	// asked steps the worker at each offset and returns how many queries
	// it sent: what the topic delivers before a marker published after.
	var last time.Time
	asked := func(offsets ...time.Duration) int {
		t.Helper()
		for _, d := range offsets {
			now = start.Add(d)
			w.queryWhileCatchingUp(ctx, &last)
		}
		if err := topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: jobtest.Info(9).Encode()}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			m, err := topic.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch m.Value.Kind {
			case jobs.KindQuery:
				n++
			case jobs.KindJob:
				return n
			}
		}
	}
	if n := asked(0, time.Second); n != 0 {
		t.Fatalf("nothing waits: %d queries", n)
	}
	w.learn(jobtest.Info(1), false)
	if n := asked(time.Second, 1500*time.Millisecond, 2*time.Second, 2500*time.Millisecond, 3*time.Second, 3500*time.Millisecond); n != 2 {
		t.Fatalf("a job waits: %d queries from 1s to 3.5s, want 2 (every %s)", n, queryEvery)
	}
	if n := asked(10*time.Second, 20*time.Second); n != 0 {
		t.Fatalf("after the catch-up: %d queries", n)
	}
}
