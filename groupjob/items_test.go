package groupjob_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/groupjob"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

func TestGroupReplicaItems(t *testing.T) {
	plan := planOf(t, recordstest.GroupJob(t, 3, "", 0))
	m := &plan.Macros[0]
	items := groupjob.RoomItems(m, 3)
	if len(items) != 3*len(m.Micros) {
		t.Fatalf("%d items for %d MicroJobs and R=3", len(items), len(m.Micros))
	}
	count := map[jobs.ID]int{}
	for i, it := range items {
		mid, r, err := groupjob.ParseReplicaItem(it)
		if err != nil {
			t.Fatal(err)
		}
		// Replica-major: every MicroJob's #0 comes before any #1.
		if r != i/len(m.Micros) || mid != m.Micros[i%len(m.Micros)].ID {
			t.Fatalf("item %d is %q", i, it)
		}
		if groupjob.ReplicaItem(mid, r) != it {
			t.Fatalf("item %q does not round-trip", it)
		}
		count[mid]++
	}
	for _, mu := range m.Micros {
		if count[mu.ID] != 3 {
			t.Fatalf("MicroJob %s has %d items", mu.ID, count[mu.ID])
		}
	}
	if len(slices.Compact(slices.Clone(items))) != len(items) {
		t.Fatal("duplicate items")
	}
	id := m.Micros[0].ID.String()
	for _, bad := range []macrojob.ID{"", "#1", macrojob.ID(id), macrojob.ID(id + "#"),
		macrojob.ID(id + "#-1"), macrojob.ID(id + "#01"), macrojob.ID(id + "#16"), "zz#0"} {
		if _, _, err := groupjob.ParseReplicaItem(bad); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("item %q: err %v", bad, err)
		}
	}
}

// TestGroupTarget: a token runs its own MicroJob unless it is done or
// taken in this turn, else another of the MacroJob that is neither.
func TestGroupTarget(t *testing.T) {
	m := newMesh(t, 1, "big")
	g := m.nodes[m.ids[0]]
	plan := planOf(t, recordstest.GroupJob(t, 3, "", 0))
	micros := plan.Macros[0].Micros
	mid := micros[0].ID
	if mu, ok := g.Target(plan, mid, nil, nil); !ok || mu.ID != mid {
		t.Fatalf("target %v, %v: want its own MicroJob", mu, ok)
	}
	done := map[jobs.ID]bool{mid: true}
	taken := map[jobs.ID]bool{}
	seen := map[jobs.ID]bool{}
	for range len(micros) - 1 {
		mu, ok := g.Target(plan, mid, done, taken)
		if !ok || mu.Macro != 0 || done[mu.ID] || taken[mu.ID] || seen[mu.ID] {
			t.Fatalf("target %v, %v", mu, ok)
		}
		seen[mu.ID], taken[mu.ID] = true, true
	}
	if mu, ok := g.Target(plan, mid, done, taken); ok {
		t.Fatalf("target %v with every MicroJob done or taken", mu)
	}
	if len(done) != 1 {
		t.Fatal("Target changed done")
	}
	if _, ok := g.Target(plan, jobs.ID{}, nil, nil); ok {
		t.Fatal("a target for an unknown MicroJob")
	}
}

// completer records the items completed.
type completer []macrojob.ID

func (c *completer) Complete(_ context.Context, id macrojob.ID) error {
	*c = append(*c, id)
	return nil
}

// TestGroupCompleteReplicas: a room re-created by this processor
// completes as many tokens of each MicroJob as it has committers, at
// most R.
func TestGroupCompleteReplicas(t *testing.T) {
	m := newMesh(t, 4, "big")
	self := m.ids[0]
	g := m.nodes[self]
	info := recordstest.GroupJob(t, 3, "", 0)
	plan := planOf(t, info)
	macro := &plan.Macros[0]
	a, b := macro.Micros[0].ID, macro.Micros[1].ID
	for _, p := range m.ids[:2] {
		m.s.commit(a, p)
	}
	for _, p := range m.ids {
		m.s.commit(b, p)
	}
	var got completer
	g.CompleteReplicas(context.Background(), info, plan, macro, &got, macrojob.PeerID(self))
	want := []macrojob.ID{groupjob.ReplicaItem(a, 0), groupjob.ReplicaItem(a, 1),
		groupjob.ReplicaItem(b, 0), groupjob.ReplicaItem(b, 1), groupjob.ReplicaItem(b, 2)}
	if !slices.Equal(got, want) {
		t.Fatalf("completed %v, want %v", got, want)
	}
	got = nil
	g.CompleteReplicas(context.Background(), info, plan, macro, &got, macrojob.PeerID(m.ids[1]))
	one := recordstest.GroupJob(t, 1, "", 0)
	g.CompleteReplicas(context.Background(), one, planOf(t, one), &planOf(t, one).Macros[0], &got, macrojob.PeerID(self))
	if len(got) != 0 {
		t.Fatalf("completed %v in another's room or a job of one replica", got)
	}
}

// FuzzParseReplicaItem: an item from the queue either fails as
// records.ErrBadRecord or is exactly what ReplicaItem writes.
func FuzzParseReplicaItem(f *testing.F) {
	plan := planOf(f, recordstest.GroupJob(f, 3, "", 0))
	for _, it := range groupjob.RoomItems(&plan.Macros[0], 3) {
		f.Add(string(it))
	}
	f.Add("")
	f.Add("#1")
	f.Add("zz#0")
	f.Fuzz(func(t *testing.T, item string) {
		mid, r, err := groupjob.ParseReplicaItem(macrojob.ID(item))
		if err != nil {
			if !errors.Is(err, records.ErrBadRecord) {
				t.Fatalf("item %q: err %v", item, err)
			}
			return
		}
		if r < 0 || r >= jobs.MaxReplicas || string(groupjob.ReplicaItem(mid, r)) != item {
			t.Fatalf("item %q parses as %s#%d", item, mid, r)
		}
	})
}
