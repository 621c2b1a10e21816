package models

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/dispatch"
)

// assigned is an Assigner with fixed names.
type assigned struct {
	self string
	pds  []dispatch.PreDownload
	err  error
}

func (a assigned) Self() string                                  { return a.self }
func (a assigned) PreDownloads() ([]dispatch.PreDownload, error) { return a.pds, a.err }

var _ Assigner = assigned{}

// TestFetcherBacksOff: a processor named to fetch a model it cannot get
// counts the failure and tries again only after the backoff, which
// doubles up to its maximum. A model on disk asks for nothing, and a job
// whose names could not be derived does not stop the others.
func TestFetcherBacksOff(t *testing.T) {
	a := assigned{self: "p1", pds: []dispatch.PreDownload{
		{Model: cidA, Nodes: []string{"p0", "p1", "p2"}},
		{Model: cidB, Nodes: []string{"p0", "p2"}},
	}, err: errors.New("job k: too many models")}
	store, err := OpenStore(filepath.Join(t.TempDir(), "models"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := FetcherConfig{Every: time.Second, Backoff: 10 * time.Second, MaxBackoff: 30 * time.Second, Timeout: time.Second}
	// Without a block layer ipfs:// cannot be fetched: every try fails.
	f, err := NewFetcher(FetcherParams{Assigner: a, Store: store, Registerer: reg}, cfg)
	if err != nil {
		t.Fatal(err)
	}
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
	if _, err := f.Fetch(ctx, "not-a-cid"); !errors.Is(err, ErrBadCID) {
		t.Fatalf("fetching a bad CID: %v", err)
	}
	if _, err := NewFetcher(FetcherParams{Assigner: a}, cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a fetcher without a store: %v", err)
	}
	if _, err := NewFetcher(FetcherParams{Store: store}, cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a fetcher without an assigner: %v", err)
	}
	if _, err := NewFetcher(FetcherParams{Assigner: a, Store: store}, FetcherConfig{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a zero config: %v", err)
	}
}
