package finish

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// TestHints: a MicroJob heard complete counts as done while its
// processor is alive, and at most HintLife graces after it was heard;
// aliveness is asked once per processor, with when it was last heard.
func TestHints(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	grace := time.Second
	m := func(s string) jobs.ID { return sha256.Sum256([]byte(s)) }
	for _, c := range []struct {
		name string
		at   time.Duration // since t0, when Done is asked
		dead map[string]bool
		want []string // of m1 (a, at t0), m2 (a, at t0+2s), m3 (b, at t0)
	}{
		{"all fresh, all alive", 0, nil, []string{"m1", "m2", "m3"}},
		{"one processor gone", time.Second, map[string]bool{"b": true}, []string{"m1", "m2"}},
		{"the first hints lapse after HintLife graces", HintLife * grace, nil, []string{"m2"}},
		{"every hint lapses", HintLife*grace + 2*time.Second, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Hints
			h.Progress("a", []jobs.ID{m("m1")}, t0)
			h.Progress("b", []jobs.ID{m("m3")}, t0)
			h.Progress("a", []jobs.ID{m("m2")}, t0.Add(2*time.Second))
			h.Progress("c", nil, t0) // names no MicroJob: not heard
			asked := map[string]int{}
			done := h.Done(t0.Add(c.at), grace, func(p string, last time.Time) bool {
				asked[p]++
				if want := map[string]time.Time{"a": t0.Add(2 * time.Second), "b": t0}[p]; !last.Equal(want) {
					t.Errorf("%s last heard %v, want %v", p, last, want)
				}
				return !c.dead[p]
			})
			if len(done) != len(c.want) {
				t.Fatalf("%d done, want %v", len(done), c.want)
			}
			for _, s := range c.want {
				if !done[m(s)] {
					t.Errorf("%s not done", s)
				}
			}
			for p, n := range asked {
				if n != 1 {
					t.Errorf("%s asked %d times", p, n)
				}
			}
			if a := h.Active(); len(a) != 2 || !a["a"].Equal(t0.Add(2*time.Second)) || !a["b"].Equal(t0) {
				t.Errorf("active: %v", a)
			}
		})
	}
}

// TestHintsFinalizers: the latest "finalizing" heard from each processor
// counts; the map handed out is the caller's.
func TestHintsFinalizers(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var h Hints
	if len(h.Finalizers()) != 0 {
		t.Fatal("an empty Hints heard finalizers")
	}
	h.Finalizing("a", t0)
	h.Finalizing("b", t0)
	h.Finalizing("a", t0.Add(time.Second))
	f := h.Finalizers()
	if len(f) != 2 || !f["a"].Equal(t0.Add(time.Second)) || !f["b"].Equal(t0) {
		t.Fatalf("finalizers: %v", f)
	}
	delete(f, "a")
	if _, ok := h.Finalizers()["a"]; !ok {
		t.Fatal("the caller's map is the Hints' own")
	}
}
