package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/records"
)

// expect reads ch until it has seen a put of every key in want, and
// fails if ch closes or the deadline passes first.
func expect(t *testing.T, name string, ch <-chan crdt.Change, want ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, k := range want {
		missing[k] = true
	}
	deadline := time.After(waitFor)
	for len(missing) > 0 {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("watch %s closed with %d keys unseen", name, len(missing))
			}
			if c.Kind == crdt.ChangePut {
				delete(missing, c.Key)
			}
		case <-deadline:
			t.Fatalf("watch %s: %v not seen after %v", name, slices.Collect(mapKeys(missing)), waitFor)
		}
	}
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// waitClosed fails unless ch is closed before the deadline; changes still
// queued are read past.
func waitClosed(t *testing.T, name string, ch <-chan crdt.Change) {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("watch %s still open after %v", name, waitFor)
		}
	}
}

// TestRouterWatchFollowsStoresOpenedLater: watches of every job ("/",
// "/jobs/") and of one job, started before this node holds the job's
// store, see the job's records once the store opens: its own writes and
// another replica's. A store dropped under them ends its part only: the
// watches go on with the mesh store, the other jobs and the stores opened
// later; the dropped job's store is not opened again.
func TestRouterWatchFollowsStoresOpenedLater(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a, b := jobID("a"), jobID("b")
	m0 := manager(t, c, 0, clk)
	r0 := jobstore.NewRouter(c.Replicas[0].Store, m0)
	r1 := jobstore.NewRouter(c.Replicas[1].Store, manager(t, c, 1, clk))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	all, jobsW, onlyA := r0.Watch(wctx, "/"), r0.Watch(wctx, records.JobsPrefix+"/"), r0.Watch(wctx, records.JobKey(a))
	if _, ok := m0.Get(a); ok {
		t.Fatal("job a's store is open before any write")
	}
	// The other replica writes first: replica 0 catches up once it opens.
	took1 := tookKey(a, c.Replicas[1], 1)
	if err := r1.Put(ctx, took1, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	info, took0, tookB := records.JobKey(a), tookKey(a, c.Replicas[0], 0), tookKey(b, c.Replicas[0], 0)
	if err := r0.Put(ctx, info, records.JobType, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := r0.PutBatch(ctx, []crdt.Entry{{Key: took0, Type: records.TookType}, {Key: tookB, Type: records.TookType}}); err != nil {
		t.Fatal(err)
	}
	expect(t, "/", all, info, took0, took1, tookB)
	expect(t, "/jobs/", jobsW, info, took0, took1, tookB)
	expect(t, "job a", onlyA, info, took0, took1)

	// Drop job a's store: every watch stays open.
	if err := m0.End(ctx, a, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if dropped, err := m0.Sweep(ctx); err != nil || len(dropped) != 1 || dropped[0] != a {
		t.Fatalf("dropped %v (%v), want job a", dropped, err)
	}
	advert, infoB, tookB2 := records.AdvertKey(c.Replicas[0].ID().String()), records.JobKey(b), tookKey(b, c.Replicas[0], 1)
	for _, e := range []crdt.Entry{{Key: advert, Type: records.AdvertType}, {Key: infoB, Type: records.JobType}, {Key: tookB2, Type: records.TookType}} {
		if err := r0.Put(ctx, e.Key, e.Type, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, "/", all, advert, infoB, tookB2)
	expect(t, "/jobs/", jobsW, infoB, tookB2)
	// Job a's store is not opened again; a job opened after the drop is
	// followed.
	if err := r0.Put(ctx, tookKey(a, c.Replicas[0], 2), records.TookType, nil); !errors.Is(err, jobstore.ErrDropped) {
		t.Fatalf("a write to the dropped job: %v", err)
	}
	later := tookKey(jobID("later"), c.Replicas[0], 0)
	if err := r0.Put(ctx, later, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, "/", all, later)
	expect(t, "/jobs/", jobsW, later)
	cancel()
	for name, ch := range map[string]<-chan crdt.Change{"/": all, "/jobs/": jobsW, "job a": onlyA} {
		waitClosed(t, name, ch)
	}
	crdttest.WaitUntil(t, waitFor, func() error {
		if n := jobstore.Followers(m0); n != 0 {
			return fmt.Errorf("%d watches still follow the manager", n)
		}
		return nil
	})
}

// TestRouterQueryReadsEveryStore: a query of every job reads the mesh
// store's records and every open job store's, in key order; a query of
// one job, that job's only; one outside /jobs, the mesh's only.
func TestRouterQueryReadsEveryStore(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	r := jobstore.NewRouter(c.Replicas[0].Store, manager(t, c, 0, clk))
	a, b := jobID("a"), jobID("b")
	self := c.Replicas[0]
	advert := records.AdvertKey(self.ID().String())
	entries := []crdt.Entry{
		{Key: advert, Type: records.AdvertType},
		{Key: records.JobKey(a), Type: records.JobType},
		{Key: records.JobKey(b), Type: records.JobType},
		{Key: tookKey(a, self, 0), Type: records.TookType},
		{Key: tookKey(a, self, 1), Type: records.TookType},
		{Key: tookKey(b, self, 0), Type: records.TookType},
	}
	if err := r.PutBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	keysOf := func(prefix string, keep func(string) bool) []string {
		t.Helper()
		recs, err := r.QueryKeys(ctx, prefix, keep)
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, rec := range recs {
			ks = append(ks, rec.Key)
		}
		return ks
	}
	var every, jobKeys, aKeys []string
	for _, e := range entries {
		every = append(every, e.Key)
		if strings.HasPrefix(e.Key, records.JobsPrefix+"/") {
			jobKeys = append(jobKeys, e.Key)
		}
		if strings.HasPrefix(e.Key, records.JobKey(a)+"/") { // path semantics: not the job's own record
			aKeys = append(aKeys, e.Key)
		}
	}
	slices.Sort(every)
	slices.Sort(jobKeys)
	slices.Sort(aKeys)
	for _, q := range []struct {
		prefix string
		keep   func(string) bool
		want   []string
	}{
		{"/", nil, every},
		{records.JobsPrefix, nil, jobKeys},
		{records.JobsPrefix + "/", nil, jobKeys},
		{records.JobKey(a), nil, aKeys},
		{records.NodesPrefix, nil, []string{advert}},
		{"/", func(k string) bool { return strings.Contains(k, "/took/") }, slices.Sorted(slices.Values([]string{tookKey(a, self, 0), tookKey(a, self, 1), tookKey(b, self, 0)}))},
	} {
		if got := keysOf(q.prefix, q.keep); !slices.Equal(got, q.want) {
			t.Errorf("Query(%q) = %q, want %q", q.prefix, got, q.want)
		}
	}
	if len(aKeys) != 2 || len(jobKeys) != 5 {
		t.Fatalf("%d keys of job a, %d of every job", len(aKeys), len(jobKeys))
	}
	// The GC list covers the mesh store's and both job stores' blocks.
	merged, err := r.Merged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mesh, err := self.Store.Merged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) < len(mesh)+2 {
		t.Fatalf("Router.Merged lists %d blocks, the mesh store alone %d", len(merged), len(mesh))
	}
	if r.Self() != self.ID() {
		t.Fatalf("Self() = %s", r.Self())
	}
}

// TestRouterWatchLeavesNothingRunning: watches of every kind, cancelled,
// leave no goroutine behind, including the parts that followed a store
// opened and dropped while they lived; a watch ends when the mesh store
// closes.
func TestRouterWatchLeavesNothingRunning(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	m := manager(t, c, 0, clk)
	r := jobstore.NewRouter(c.Replicas[0].Store, m)
	a, b := jobID("a"), jobID("b")
	self := c.Replicas[0]
	if err := r.Put(ctx, tookKey(a, self, 0), records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	wctx, cancel := context.WithCancel(ctx)
	var chans []<-chan crdt.Change
	for range 10 {
		for _, p := range []string{"/", records.JobsPrefix, records.JobKey(a), records.JobKey(b), records.NodesPrefix} {
			chans = append(chans, r.Watch(wctx, p))
		}
	}
	if n := runtime.NumGoroutine(); n < before+50 {
		t.Fatalf("%d goroutines for 50 watches (%d before)", n, before)
	}
	// Job b's store opens and is dropped while the watches live.
	if err := r.Put(ctx, tookKey(b, self, 0), records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, "job b", chans[3], tookKey(b, self, 0))
	if err := m.End(ctx, b, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if dropped, err := m.Sweep(ctx); err != nil || len(dropped) != 1 {
		t.Fatalf("dropped %v (%v), want job b", dropped, err)
	}
	cancel()
	for i, ch := range chans {
		waitClosed(t, fmt.Sprint("watch ", i), ch)
	}
	crdttest.WaitUntil(t, waitFor, func() error {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Errorf("%d goroutines, %d before the watches", n, before)
		}
		if n := jobstore.Followers(m); n != 0 {
			return fmt.Errorf("%d watches still follow the manager", n)
		}
		return nil
	})
	// The mesh store closing ends a watch; job a's store stays open.
	w := r.Watch(ctx, "/")
	if err := self.Store.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "/ after the mesh store closed", w)
	if _, ok := m.Get(a); !ok {
		t.Fatal("job a's store closed with the mesh store")
	}
}
