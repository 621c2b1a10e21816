package groupjob_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// TestGroupWaitingLogsOnce: a replicated job without a group is logged
// once a minute with what it needs, not on every poll.
func TestGroupWaitingLogsOnce(t *testing.T) {
	m := newMesh(t, 1, "big")
	a := m.ids[0]
	info := recordstest.GroupJob(t, 4, "big", 0)
	plan := planOf(t, info)
	for range 5 {
		if m.nodes[a].MayWork(context.Background(), info, plan) {
			t.Fatal("one processor may work on a job of four replicas")
		}
	}
	out := m.log.String()
	if n := strings.Count(out, "replicated job waits"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, out)
	}
	if n := m.events(t, a, "waiting"); n != 1 {
		t.Fatalf("waiting counted %v times, want 1", n)
	}
	for _, want := range []string{"replicas=4", "gpuModel=big", plan.JobID.String(), "no card model has enough processors"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
	m.clock.advance(59 * time.Second)
	m.nodes[a].MayWork(context.Background(), info, plan)
	if n := m.events(t, a, "waiting"); n != 1 {
		t.Fatalf("logged again within the minute (%v)", n)
	}
	m.clock.advance(time.Second)
	m.nodes[a].MayWork(context.Background(), info, plan)
	if n := m.events(t, a, "waiting"); n != 2 {
		t.Fatalf("waiting counted %v times a minute later, want 2", n)
	}
}

// TestGroupChosenOnce: the first processor to look chooses and writes the
// group; the others take it, and only its R members may work.
func TestGroupChosenOnce(t *testing.T) {
	m := newMesh(t, 4, "big")
	info := recordstest.GroupJob(t, 3, "", 0)
	plan := planOf(t, info)
	workers := m.workers(info, plan)
	if len(workers) != 3 {
		t.Fatalf("workers %v, want 3", workers)
	}
	recs, _ := m.s.Query(context.Background(), records.GroupPrefix(plan.JobID))
	if len(recs) != 1 || recs[0].Author.String() != m.ids[0] {
		t.Fatalf("%d group records, want one by the first to look", len(recs))
	}
	chosen := 0.0
	for _, id := range m.ids {
		chosen += m.events(t, id, "chosen")
	}
	if chosen != 1 {
		t.Fatalf("chosen counted %v times", chosen)
	}
	if !slices.Equal(m.workers(info, plan), workers) {
		t.Fatal("the workers changed on a second look")
	}
	// A job of one replica needs no group: anyone works on it.
	one := recordstest.GroupJob(t, 1, "", 0)
	if got := m.workers(one, planOf(t, one)); len(got) != 4 {
		t.Fatalf("R=1 workers %v", got)
	}
}

// TestGroupSilentMemberReplaced: a member that commits nothing for
// SilentAfter after the others first saw the group is replaced by a
// processor of the card model outside it, once.
func TestGroupSilentMemberReplaced(t *testing.T) {
	m := newMesh(t, 4, "big")
	info := recordstest.GroupJob(t, 3, "", 0)
	plan := planOf(t, info)
	members := m.workers(info, plan)
	outside := slices.DeleteFunc(slices.Clone(m.ids), func(id string) bool { return slices.Contains(members, id) })[0]
	silent := members[2]
	mid := plan.Macros[0].Micros[0].ID
	m.s.commit(mid, members[0])
	m.s.commit(mid, members[1])
	m.clock.advance(silentAfter - 1)
	if got := m.workers(info, plan); !slices.Equal(got, members) {
		t.Fatalf("replaced before SilentAfter: %v, was %v", got, members)
	}
	m.clock.advance(1)
	got := m.workers(info, plan)
	if slices.Contains(got, silent) || !slices.Contains(got, outside) || len(got) != 3 {
		t.Fatalf("workers %v: want %v without %s, with %s", got, members, silent, outside)
	}
	replaced := 0.0
	for _, id := range m.ids {
		replaced += m.events(t, id, "replaced")
	}
	if replaced != 1 {
		t.Fatalf("replaced counted %v times", replaced)
	}
	// The new member is not silent yet: its round was first seen now.
	m.clock.advance(silentAfter - 1)
	if again := m.workers(info, plan); !slices.Equal(again, got) {
		t.Fatalf("workers %v, then %v", got, again)
	}
}

// TestGroupMayRedo: a redo of a replicated job is for a processor of the
// group's card model outside the group, that has not committed to the
// MicroJob, once its MacroJob's commitment round is over.
func TestGroupMayRedo(t *testing.T) {
	m := newMesh(t, 5, "big")
	info := recordstest.GroupJob(t, 3, "", 0)
	plan := planOf(t, info)
	ctx := context.Background()
	mid := plan.Macros[0].Micros[0].ID
	rd := records.Redo{Micro: mid.String()}
	if m.nodes[m.ids[0]].MayRedo(ctx, info, plan, rd) {
		t.Fatal("may redo before it knows the group")
	}
	members := m.workers(info, plan)
	outside := slices.DeleteFunc(slices.Clone(m.ids), func(id string) bool { return slices.Contains(members, id) })
	if m.nodes[outside[0]].MayRedo(ctx, info, plan, rd) {
		t.Fatal("may redo before the commitment round is over")
	}
	// R committers, one of them outside the group: members[0] has not
	// committed, and still may not redo.
	for _, mu := range plan.Macros[0].Micros {
		for _, p := range []string{members[1], members[2], outside[1]} {
			m.s.commit(mu.ID, p)
		}
	}
	if !m.nodes[outside[0]].MayRedo(ctx, info, plan, rd) {
		t.Fatal("may not redo once the commitment round is over")
	}
	if m.nodes[members[0]].MayRedo(ctx, info, plan, rd) {
		t.Fatal("a member may redo")
	}
	if m.nodes[outside[1]].MayRedo(ctx, info, plan, rd) {
		t.Fatal("may redo a MicroJob it committed to")
	}
	if m.nodes[outside[0]].MayRedo(ctx, info, plan, records.Redo{Micro: "zz"}) {
		t.Fatal("may redo an unknown MicroJob")
	}
	one := recordstest.GroupJob(t, 1, "", 0)
	if !m.nodes[members[0]].MayRedo(ctx, one, planOf(t, one), rd) {
		t.Fatal("R=1: may not redo")
	}
}

// TestGroupSilentWaitsForFullMacros: committers of a replicated job are
// silent only once their MacroJob's commitment round is over.
func TestGroupSilentWaitsForFullMacros(t *testing.T) {
	m := newMesh(t, 3, "big")
	a := m.nodes[m.ids[0]]
	info := recordstest.GroupJob(t, 3, "", 0)
	plan := planOf(t, info)
	mid := plan.Macros[0].Micros[0].ID
	silent := map[string][]string{mid.String(): {m.ids[1]}, "zz": {m.ids[1]}}
	if got := a.Silent(context.Background(), info, plan, silent); len(got) != 0 {
		t.Fatalf("silent before the commitment round is over: %v", got)
	}
	for _, mu := range plan.Macros[0].Micros {
		for _, p := range m.ids {
			m.s.commit(mu.ID, p)
		}
	}
	got := a.Silent(context.Background(), info, plan, silent)
	if len(got) != 1 || !slices.Equal(got[mid.String()], []string{m.ids[1]}) {
		t.Fatalf("silent %v, want only %s", got, mid)
	}
	one := recordstest.GroupJob(t, 1, "", 0)
	if got := a.Silent(context.Background(), one, planOf(t, one), silent); len(got) != len(silent) {
		t.Fatalf("R=1: silent %v, want %v", got, silent)
	}
}
