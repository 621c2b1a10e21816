package meshview

import (
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
)

// viewOf is a dispatch view listing ids.
func viewOf(ids ...string) *View {
	var procs []ProcessorView
	for _, id := range ids {
		procs = append(procs, ProcessorView{Node: dispatch.Node{ID: id}})
	}
	return NewView(time.Time{}, procs)
}

// TestViewGrowsOnlyWithNewProcessors: a first view counts as grown; one
// that lists the same processors, or fewer, does not.
func TestViewGrowsOnlyWithNewProcessors(t *testing.T) {
	ab := viewOf("a", "b")
	for _, c := range []struct {
		name     string
		old, new *View
		want     bool
	}{
		{"first view", nil, ab, true},
		{"same processors", ab, viewOf("a", "b"), false},
		{"one more", ab, viewOf("a", "b", "c"), true},
		{"one gone", ab, viewOf("a"), false},
		{"one replaced", ab, viewOf("a", "c"), true},
	} {
		if got := Grew(c.old, c.new); got != c.want {
			t.Errorf("%s: Grew = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPickRerunner: a kicked-out processor is never picked; when nobody
// in the pool weighs anything every processor not kicked out weighs the
// same; when all are kicked out nobody is picked.
func TestPickRerunner(t *testing.T) {
	v := NewView(time.Time{}, []ProcessorView{{Node: dispatch.Node{ID: "a"}}, {Node: dispatch.Node{ID: "b"}}, {Node: dispatch.Node{ID: "c"}}},
		dispatch.Kick{Node: "c", Reason: dispatch.KickTimeouts})
	picked := map[int]bool{}
	for s := range 100 {
		i, ok := v.PickRerunner(dispatch.Job{}, []string{"a", "b", "c"}, dispatch.Seed([]byte{byte(s)}))
		if !ok || i == 2 {
			t.Fatalf("seed %d: picked %d (%v)", s, i, ok)
		}
		picked[i] = true
	}
	if len(picked) != 2 {
		t.Fatalf("picked %v among two processors of no weight, want both", picked)
	}
	if _, ok := v.PickRerunner(dispatch.Job{}, []string{"c"}, []byte("seed")); ok {
		t.Fatal("picked a kicked-out processor")
	}
}
