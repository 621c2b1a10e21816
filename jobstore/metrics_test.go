package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/records"
)

// jobstoreMetrics is the exposition of the Manager's metrics with the
// given values.
func jobstoreMetrics(open, opened, dropped, refused int) string {
	return fmt.Sprintf(`# HELP jobmesh_jobstore_dropped_total Job stores dropped once their job's retention had passed.
# TYPE jobmesh_jobstore_dropped_total counter
jobmesh_jobstore_dropped_total %d
# HELP jobmesh_jobstore_open Job stores this node holds open.
# TYPE jobmesh_jobstore_open gauge
jobmesh_jobstore_open %d
# HELP jobmesh_jobstore_opened_total Job stores opened (a store reopened by Resume included).
# TYPE jobmesh_jobstore_opened_total counter
jobmesh_jobstore_opened_total %d
# HELP jobmesh_jobstore_refused_total Distinct records (job, key and author) a job store refused: a record of another job or of the mesh, one its author may not write, or one an aggregate may not carry.
# TYPE jobmesh_jobstore_refused_total counter
jobmesh_jobstore_refused_total %d
`, dropped, open, opened, refused)
}

// TestManagerMetrics: the Manager's metrics count the stores opened and
// dropped, and each record a job store refused once, however often it
// is read: two foreign records from the network and a local write under
// another peer's key. A second Manager cannot register over the first;
// Close unregisters them.
func TestManagerMetrics(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a, b := jobID("a"), jobID("b")
	reg := prometheus.NewRegistry()
	cfg := c.Config(1)
	cfg.AuthorPolicy = records.AuthorPolicy()
	m, err := jobstore.New(jobstore.Config{Store: cfg, Blocks: c.Blocks, Retention: time.Hour, Now: clk.Now, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	check := func(open, opened, dropped, refused int) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(jobstoreMetrics(open, opened, dropped, refused))); err != nil {
			t.Fatal(err)
		}
	}
	check(0, 0, 0, 0)
	if _, err := jobstore.New(jobstore.Config{Store: cfg, Blocks: c.Blocks, Registerer: reg}); err == nil {
		t.Fatal("a second Manager registered the same metrics")
	}
	sa, err := m.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(ctx, a); err != nil {
		t.Fatal(err)
	}
	check(2, 2, 0, 0)

	_, foreign := writeForeign(t, c, a, b)
	for _, k := range foreign {
		crdttest.WaitUntil(t, waitFor, func() error {
			if _, err := sa.Get(ctx, k); !errors.Is(err, jobstore.ErrForeignRecord) {
				return fmt.Errorf("reading %q: %v, want a refusal", k, err)
			}
			return nil
		})
		// Read again: still one refusal each.
		if _, err := sa.Get(ctx, k); !errors.Is(err, jobstore.ErrForeignRecord) {
			t.Fatalf("reading %q again: %v", k, err)
		}
	}
	check(2, 2, 0, 2)
	// The base policy's refusal of a local write counts too.
	if err := sa.Put(ctx, tookKey(a, c.Replicas[0], 2), records.TookType, nil); !errors.Is(err, crdt.ErrPolicy) {
		t.Fatalf("a took record under another peer's key: %v", err)
	}
	check(2, 2, 0, 3)

	if err := m.End(ctx, a, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if _, err := m.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	check(1, 2, 1, 3)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader("")); err != nil {
		t.Fatalf("metrics left after Close: %v", err)
	}
}
