package processor

import (
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
)

// TestVerifierRunners: each MacroJob ranks every processor once, its first
// owner last; the ranking does not depend on the order processors are
// listed in, and the first rank spreads over the processors.
func TestVerifierRunners(t *testing.T) {
	plan := roundsPlan(t)
	// More MacroJobs than the fixture's two, so the spread shows.
	for len(plan.Macros) < 40 {
		m := plan.Macros[len(plan.Macros)%2]
		m.Index = uint64(len(plan.Macros))
		plan.Macros = append(plan.Macros, m)
	}
	procs := []string{"p1", "p2", "p3", "p4", "p5"}
	owners := make([]string, len(plan.Macros))
	for i := range owners {
		owners[i] = procs[i%len(procs)]
	}
	id := plan.JobID.String()
	got := verifierRunners(id, plan, procs, owners)
	reversed := slices.Clone(procs)
	slices.Reverse(reversed)
	if again := verifierRunners(id, plan, reversed, owners); !slices.EqualFunc(got, again, slices.Equal) {
		t.Fatal("the ranking depends on the order of the processor list")
	}
	first := map[string]int{}
	for i, order := range got {
		if len(order) != len(procs) {
			t.Fatalf("MacroJob %d ranks %d of %d processors: %v", i, len(order), len(procs), order)
		}
		sorted := slices.Sorted(slices.Values(order))
		if !slices.Equal(sorted, procs) {
			t.Fatalf("MacroJob %d ranks %v", i, order)
		}
		if order[len(order)-1] != owners[i] {
			t.Fatalf("MacroJob %d: first owner %s is not last in %v", i, owners[i], order)
		}
		first[order[0]]++
	}
	if len(first) != len(procs) {
		t.Fatalf("first ranks fall on %d of %d processors: %v", len(first), len(procs), first)
	}
	// Without a named first owner (a view too young), every processor is
	// ranked all the same.
	none := verifierRunners(id, plan, procs, make([]string, len(plan.Macros)))
	for i, order := range none {
		if len(order) != len(procs) {
			t.Fatalf("MacroJob %d ranks %v without a first owner", i, order)
		}
	}
}

// TestDueVerifiers: the first in rank runs a verifier at once, the k-th
// after k takeovers; committed verifiers are skipped; one that ran a
// regular MicroJob the verifier checks passes its turn until the last in rank's turn is due;
// at most max are due at once.
func TestDueVerifiers(t *testing.T) {
	plan := roundsPlan(t)
	ver := func(i int) jobs.ID { m := plan.Macros[i]; return m.Micros[m.VerifierSlot].ID }
	checked := func(i int) jobs.ID {
		m := plan.Macros[i]
		v := m.Micros[m.VerifierSlot]
		return m.Micros[v.Sources[0].Slot].ID
	}
	ranks := [][]string{{"a", "b", "c"}, {"b", "a", "c"}}
	none := func(jobs.ID) bool { return false }
	const takeover = time.Minute
	due := func(self string, done, ran func(jobs.ID) bool, since time.Duration, max int) []jobs.ID {
		return dueVerifiers(plan, ranks, self, done, ran, since, takeover, max)
	}
	if got := due("a", none, none, 0, 3); !slices.Equal(got, []jobs.ID{ver(0)}) {
		t.Fatalf("first in rank at once: %v", got)
	}
	if got := due("a", none, none, takeover-time.Second, 3); !slices.Equal(got, []jobs.ID{ver(0)}) {
		t.Fatalf("second in rank before its takeover: %v", got)
	}
	if got := due("a", none, none, takeover, 3); !slices.Equal(got, []jobs.ID{ver(0), ver(1)}) {
		t.Fatalf("after a takeover: %v", got)
	}
	if got := due("a", none, none, takeover, 1); !slices.Equal(got, []jobs.ID{ver(0)}) {
		t.Fatalf("max 1: %v", got)
	}
	if got := due("c", none, none, 2*takeover-time.Second, 3); len(got) != 0 {
		t.Fatalf("third in rank before two takeovers: %v", got)
	}
	done0 := func(id jobs.ID) bool { return id == ver(0) }
	if got := due("a", done0, none, takeover, 3); !slices.Equal(got, []jobs.ID{ver(1)}) {
		t.Fatalf("a committed verifier is due: %v", got)
	}
	ran0 := func(id jobs.ID) bool { return id == checked(0) }
	if got := due("a", none, ran0, 0, 3); len(got) != 0 {
		t.Fatalf("a processor that ran a checked MicroJob did not pass its turn: %v", got)
	}
	if got := due("c", none, ran0, 2*takeover, 3); !slices.Equal(got, []jobs.ID{ver(0), ver(1)}) {
		t.Fatalf("the last in rank passes its turn: %v", got)
	}
	// The ones after it may be gone: once the last in rank's turn is
	// due, one that ran a checked MicroJob runs the verifier too.
	if got := due("a", none, ran0, 2*takeover, 3); !slices.Equal(got, []jobs.ID{ver(0), ver(1)}) {
		t.Fatalf("passes its turn after the last in rank's is due: %v", got)
	}
	if got := due("z", none, none, time.Hour, 3); len(got) != 0 {
		t.Fatalf("an unranked processor runs verifiers: %v", got)
	}
	if got := dueVerifiers(plan, nil, "a", none, none, time.Hour, takeover, 3); len(got) != 0 {
		t.Fatalf("verifiers due without ranks: %v", got)
	}
}

// TestRoomItemsLeaveOutVerifier: a room holds the MacroJob's regular
// MicroJobs only, unless the job is replicated (its group runs every
// MicroJob, the verifier too, in the room).
func TestRoomItemsLeaveOutVerifier(t *testing.T) {
	plan := roundsPlan(t)
	m := &plan.Macros[0]
	js := &jobState{info: &jobs.JobInfo{Requirements: jobs.Requirements{Replicas: 1}}, plan: plan}
	items := roomItems(js, m)
	if len(items) != m.Regular {
		t.Fatalf("%d items for %d regular MicroJobs", len(items), m.Regular)
	}
	if slices.Contains(items, macrojob.ID(m.Micros[m.VerifierSlot].ID.String())) {
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
		known: map[jobs.ID]*jobState{plan.JobID: {plan: plan, stopWait: func() { stopped = true }}},
		wake:  make(chan struct{}, 1),
		log:   slog.New(slog.DiscardHandler),
	}
	info := roundsInfo(2)
	w.learn(info)
	if _, ok := w.known[info.ID()]; !ok {
		t.Fatal("the new job is not known")
	}
	if !stopped {
		t.Fatal("learning a job did not interrupt the wait in another job's room")
	}
	stopped = false
	w.learn(info)
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
