package macrojob

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsCountStatsDeltas(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// A second room set-up on the same registry shares the counters.
	m2, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.count(Stats{}, Stats{Handoffs: 2, Locks: 1})
	m2.count(Stats{Handoffs: 2, Locks: 1}, Stats{Handoffs: 3, Locks: 1, Takeovers: 1})
	m.count(Stats{Handoffs: 3}, Stats{Handoffs: 3}) // nothing new
	var nilMetrics *Metrics
	nilMetrics.count(Stats{}, Stats{Handoffs: 9}) // rooms without metrics
	m.unsent(2)
	nilMetrics.unsent(1)
	for event, want := range map[string]float64{"handoff": 3, "lock": 1, "takeover": 1, "stepdown": 0, "reopen": 0, "unsent": 2} {
		if got := testutil.ToFloat64(m.events.WithLabelValues(event)); got != want {
			t.Errorf("%s: %v, want %v", event, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.events); n != 6 {
		t.Fatalf("%d series, want 6", n)
	}
	m.read(KindSnapshot)
	m2.read(KindSnapshot)
	m.read(KindRequest)
	nilMetrics.read(KindResult)
	for kind, want := range map[string]float64{"snapshot": 2, "request": 1, "result": 0} {
		if got := testutil.ToFloat64(m.heard.WithLabelValues(kind)); got != want {
			t.Errorf("read %s: %v, want %v", kind, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.heard); n != 3 {
		t.Fatalf("%d message series, want 3", n)
	}
}
