package processor

import (
	"bytes"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/records"
)

// TestRanksWaitForAGrowingView: a job's ranks are not used while the view
// gained a processor within the last HeadStart, at most until the job is
// HeadStart old; once used, the moment stays whatever the view does.
func TestRanksWaitForAGrowingView(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	w := &Worker{cfg: Config{HeadStart: time.Second}}
	w.grewAt.Store(t0.Add(-100 * time.Millisecond).UnixNano())
	js := &jobState{learnedAt: t0}
	if _, ok := w.rankedAt(js, t0.Add(500*time.Millisecond)); ok {
		t.Fatal("ranked 600 ms after the view grew")
	}
	at, ok := w.rankedAt(js, t0.Add(950*time.Millisecond))
	if !ok || !at.Equal(t0.Add(950*time.Millisecond)) {
		t.Fatalf("a view unchanged for 1.05 s: ranked %v at %v, want at t0+950ms", ok, at)
	}
	w.grewAt.Store(t0.Add(time.Second).UnixNano())
	if again, ok := w.rankedAt(js, t0.Add(1100*time.Millisecond)); !ok || !again.Equal(at) {
		t.Fatalf("after the view grew again: ranked %v at %v, want the first moment %v", ok, again, at)
	}

	// A mesh that keeps growing holds a new job back for its HeadStart.
	late := &jobState{learnedAt: t0.Add(2 * time.Second)}
	w.grewAt.Store(t0.Add(2900 * time.Millisecond).UnixNano())
	if _, ok := w.rankedAt(late, t0.Add(2999*time.Millisecond)); ok {
		t.Fatal("ranked a job 999 ms old in a view that grew 99 ms ago")
	}
	if _, ok := w.rankedAt(late, t0.Add(3*time.Second)); !ok {
		t.Fatal("a job HeadStart old is still held back")
	}

	// With no HeadStart nothing waits.
	w0 := &Worker{}
	w0.grewAt.Store(t0.UnixNano())
	if _, ok := w0.rankedAt(&jobState{learnedAt: t0}, t0); !ok {
		t.Fatal("HeadStart 0: ranks held back")
	}
}

// TestClaimsOfAreInRank: the claims handed to macrojob.DecideOpen are the
// other processors', in first-owner order whenever they were heard, each
// marked when it comes before this processor.
func TestClaimsOfAreInRank(t *testing.T) {
	_, plan := byteJob(t, 400, 10, jobs.Requirements{})
	id, idx := plan.JobID.String(), strconv.FormatUint(plan.Macros[0].Index, 10)
	procs := []string{"p1", "p2", "p3", "p4", "p5"}
	slices.SortFunc(procs, func(a, b string) int {
		ha, hb := records.RankHash(a, id, idx), records.RankHash(b, id, idx)
		return bytes.Compare(hb[:], ha[:])
	})
	t0 := time.Unix(1_000_000, 0)
	js := (&jobState{claims: map[uint64]map[string]time.Time{
		plan.Macros[0].Index: {
			procs[4]: t0,
			procs[2]: t0.Add(time.Millisecond),
			procs[0]: t0.Add(-time.Second),
			procs[1]: t0.Add(2 * time.Millisecond),
		},
	}}).withPlan(plan)
	w := &Worker{self: procs[2]}
	want := []macrojob.RoomClaim{
		{Peer: procs[0], At: t0.Add(-time.Second), Ahead: true},
		{Peer: procs[1], At: t0.Add(2 * time.Millisecond), Ahead: true},
		{Peer: procs[4], At: t0},
	}
	if got := w.claimsOf(js, plan.Macros[0].Index); !slices.Equal(got, want) {
		t.Fatalf("claims %+v, want %+v", got, want)
	}
	if got := w.claimsOf(js, plan.Macros[1].Index); got != nil {
		t.Fatalf("a MacroJob nobody claimed: claims %+v", got)
	}
}

// TestRoomLeft: the MicroJobs left in a room, which bound the ranks that
// may join it, are its regular MicroJobs without a commitment; a verifier
// runs outside the room and does not count, and a replicated job's rooms
// are not bounded (0).
func TestRoomLeft(t *testing.T) {
	info, plan := byteJob(t, 400, 10, jobs.Requirements{})
	js := (&jobState{info: info}).withPlan(plan)
	m := &plan.Macros[0]
	regular := 0
	committed := map[jobs.ID]bool{}
	for _, mu := range m.Micros {
		if mu.Verifier {
			committed[mu.ID] = false // outside the room: never counted
			continue
		}
		if regular++; regular <= 3 {
			committed[mu.ID] = true
		}
	}
	if regular == len(m.Micros) {
		t.Fatal("the checked plan's MacroJob has no verifier")
	}
	if got, want := roomLeft(js, m, committed), regular-3; got != want {
		t.Fatalf("roomLeft = %d, want %d (%d regular, 3 committed)", got, want, regular)
	}
	if got := roomLeft(js, m, nil); got != regular {
		t.Fatalf("nothing committed: roomLeft = %d, want %d", got, regular)
	}
	rinfo, rplan := byteJob(t, 400, 10, jobs.Requirements{Replicas: 3})
	if got := roomLeft((&jobState{info: rinfo}).withPlan(rplan), &rplan.Macros[0], nil); got != 0 {
		t.Fatalf("a replicated job: roomLeft = %d, want 0", got)
	}
}

// TestHeadStartGrowsWithTheJobsProcessors: the rooms are left to their
// first owners one HeadStart for each 32 processors eligible for the job,
// begun.
func TestHeadStartGrowsWithTheJobsProcessors(t *testing.T) {
	w := &Worker{cfg: Config{HeadStart: time.Second}}
	for _, c := range []struct {
		eligible int
		want     time.Duration
	}{{0, time.Second}, {1, time.Second}, {32, time.Second}, {33, 2 * time.Second}, {100, 4 * time.Second}} {
		if got := w.headStart(&jobState{eligible: c.eligible}); got != c.want {
			t.Errorf("%d eligible: head start %s, want %s", c.eligible, got, c.want)
		}
	}
}
