package processor

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/jobs"
)

// TestModelFetcherBacksOff: a processor named to fetch a model it cannot
// get counts the failure and tries again only after the backoff, which
// doubles up to its maximum; the worker keeps running meanwhile. A model
// on disk or a job without models asks for nothing.
func TestModelFetcherBacksOff(t *testing.T) {
	js := modelJob(t, cidA)
	var ads []Advertised
	for _, id := range []string{"p0", "p1", "p2"} {
		ads = append(ads, Advertised{PeerID: id})
	}
	v := modelView(t, ads)
	w := &Worker{self: "p1", cfg: DefaultConfig(), known: map[jobs.ID]*jobState{}}
	w.known[js.plan.JobID] = js
	w.known[modelJob(t).plan.JobID] = modelJob(t) // no models: nothing to fetch
	w.dview.Store(v)
	store, err := OpenModelStore(filepath.Join(t.TempDir(), "models"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := ModelFetcherConfig{Every: time.Second, Backoff: 10 * time.Second, MaxBackoff: 30 * time.Second, Timeout: time.Second}
	// Without a block layer ipfs:// cannot be fetched: every try fails.
	f, err := NewModelFetcher(ModelFetcherParams{Worker: w, Store: store, Registerer: reg}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Three processors, none holds the model: all three are named.
	if got := f.wanted(); !slices.Equal(got, []string{cidA}) {
		t.Fatalf("wanted %v", got)
	}
	ctx := context.Background()
	t0 := time.Now()
	tries := []struct {
		at       time.Duration
		failures float64
	}{
		{0, 1},                // fails; next try after 10s
		{5 * time.Second, 1},  // backing off
		{10 * time.Second, 2}, // fails; next after 20s more
		{25 * time.Second, 2}, // backing off
		{30 * time.Second, 3}, // fails; next after 30s (the maximum)
		{59 * time.Second, 3}, // backing off
		{60 * time.Second, 4}, // fails again
	}
	for _, tr := range tries {
		if n := f.step(ctx, t0.Add(tr.at)); n != 0 {
			t.Fatalf("at %v stored %d models", tr.at, n)
		}
		if got := testutil.ToFloat64(f.failed); got != tr.failures {
			t.Fatalf("at %v: %v failures, want %v", tr.at, got, tr.failures)
		}
	}
	if got := testutil.ToFloat64(f.fetched); got != 0 {
		t.Fatalf("fetched %v", got)
	}
	if _, err := store.Put(cidA, strings.NewReader("weights")); err != nil {
		t.Fatal(err)
	}
	if got := f.wanted(); len(got) != 0 {
		t.Fatalf("a model on disk is wanted again: %v", got)
	}
	// A kicked-out processor fetches nothing.
	store2, _ := OpenModelStore(filepath.Join(t.TempDir(), "models"), 1<<20)
	w.dview.Store(modelView(t, ads, "p1"))
	f2, err := NewModelFetcher(ModelFetcherParams{Worker: w, Store: store2}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := f2.wanted(); len(got) != 0 {
		t.Fatalf("kicked out, wanted %v", got)
	}
	if _, err := NewModelFetcher(ModelFetcherParams{Worker: w}, cfg); err == nil {
		t.Fatal("a fetcher without a store")
	}
	if _, err := NewModelFetcher(ModelFetcherParams{Worker: w, Store: store}, ModelFetcherConfig{}); err == nil {
		t.Fatal("a zero config")
	}
}
