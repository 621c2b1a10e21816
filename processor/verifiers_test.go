package processor

import (
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
)

// TestRoomItemsLeaveOutVerifier: a room holds the MacroJob's regular
// MicroJobs only, unless the job is replicated (its group runs every
// MicroJob, the verifier too, in the room).
func TestRoomItemsLeaveOutVerifier(t *testing.T) {
	plan := roundsPlan(t)
	m := &plan.Macros[0]
	js := (&jobState{info: &jobs.JobInfo{Requirements: jobs.Requirements{Replicas: 1}}}).withPlan(plan)
	items := roomItems(js, m)
	if len(items) != m.Regular {
		t.Fatalf("%d items for %d regular MicroJobs", len(items), m.Regular)
	}
	if slices.Contains(items, macrojob.ID((*m.Verifier()).ID.String())) {
		t.Fatal("the verifier is in the room")
	}
	js.info.Requirements.Replicas = 2
	if got, want := len(roomItems(js, m)), 2*len(m.Micros); got != want {
		t.Fatalf("replicated: %d items, want %d", got, want)
	}
	done := map[jobs.ID]bool{}
	js.info.Requirements.Replicas = 1
	for _, mu := range m.Micros {
		if !mu.Verifier {
			done[mu.ID] = true
		}
	}
	if !roomDone(js, m, done) {
		t.Fatal("a room whose regular MicroJobs are done is not done")
	}
	if !slices.ContainsFunc(m.Micros, func(mu jobs.MicroJob) bool { return !done[mu.ID] }) {
		t.Fatal("a MacroJob without its verifier's commitment is all done")
	}
}

// TestNewJobInterruptsRoomWaits: a worker waiting in a room of one job
// comes back when it learns another, whose verifier MicroJobs may be its
// to run at once.
func TestNewJobInterruptsRoomWaits(t *testing.T) {
	plan := roundsPlan(t)
	stopped := false
	w := &Worker{
		known: map[jobs.ID]*jobState{plan.JobID: (&jobState{stopWait: func() { stopped = true }}).withPlan(plan)},
		wake:  make(chan struct{}, 1),
		log:   slog.New(slog.DiscardHandler),
	}
	info := jobtest.Info(2)
	w.learn(info, true)
	if _, ok := w.known[info.ID()]; !ok {
		t.Fatal("the new job is not known")
	}
	if !stopped {
		t.Fatal("learning a job did not interrupt the wait in another job's room")
	}
	stopped = false
	w.learn(info, true)
	if stopped {
		t.Fatal("a job learned again interrupted the wait")
	}
}

// TestConfigRefusesRoomConfig: a room config every room would refuse
// (a queue whose owner timeout does not exceed its re-broadcast) is
// refused when the worker's config is validated, with the queue's reason.
func TestConfigRefusesRoomConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Wallet = "0x00000000000000000000000000000000000000a1"
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the default config: %v", err)
	}
	cfg.Room.Queue.OwnerTimeout = 2 * time.Second
	cfg.Room.Queue.Rebroadcast = 5 * time.Second
	err := cfg.Validate()
	if !errors.Is(err, ErrInvalidConfig) || !errors.Is(err, macrojob.ErrInvalidConfig) {
		t.Fatalf("owner timeout below re-broadcast: %v", err)
	}
	cfg.Room.Queue.Rebroadcast = time.Second
	if err := cfg.Validate(); err != nil {
		t.Fatalf("owner timeout above re-broadcast: %v", err)
	}
}
