package metricset

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAllOrNone: a set whose second collector clashes registers none of
// its collectors; Unregister frees the names.
func TestAllOrNone(t *testing.T) {
	reg := prometheus.NewRegistry()
	first := prometheus.NewCounter(prometheus.CounterOpts{Name: "a_total", Help: "a"})
	held, err := Register(reg, first)
	if err != nil {
		t.Fatal(err)
	}
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "b_total", Help: "b"})
	clash := prometheus.NewCounter(prometheus.CounterOpts{Name: "a_total", Help: "a"})
	if _, err := Register(reg, b, clash); err == nil {
		t.Fatal("a clashing set registered")
	}
	if n, err := testutil.GatherAndCount(reg, "b_total"); err != nil || n != 0 {
		t.Fatalf("b_total left registered (%d, %v)", n, err)
	}
	held.Unregister()
	if _, err := Register(reg, b, clash); err != nil {
		t.Fatalf("after Unregister: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 2 {
		t.Fatalf("%d metrics registered (%v), want 2", n, err)
	}
	nilSet, err := Register(nil, first)
	if err != nil {
		t.Fatal(err)
	}
	nilSet.Unregister()
}
