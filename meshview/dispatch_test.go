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
