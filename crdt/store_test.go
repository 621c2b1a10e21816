package crdt_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-datastore"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

const waitFor = 20 * time.Second

func TestRecordWrittenOnAnyReplicaIsReadableOnAll(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 5})
	ctx := context.Background()
	for i, r := range c.Replicas {
		if err := r.Store.Put(ctx, fmt.Sprintf("/jobs/%d", i), "job", []byte(fmt.Sprintf("job %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, reader := range c.Replicas {
		for i, writer := range c.Replicas {
			rec := c.WaitGet(reader.Index, fmt.Sprintf("/jobs/%d", i), nil)
			if rec.Author != writer.ID() || rec.Type != "job" || string(rec.Payload) != fmt.Sprintf("job %d", i) {
				t.Fatalf("replica %d read %+v for /jobs/%d", reader.Index, rec, i)
			}
		}
		recs, err := reader.Store.Query(ctx, "/jobs")
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(c.Replicas) {
			t.Fatalf("replica %d: query returned %d records", reader.Index, len(recs))
		}
		for i, rec := range recs {
			if rec.Key != fmt.Sprintf("/jobs/%d", i) {
				t.Fatalf("replica %d: query not ordered by key: %d is %q", reader.Index, i, rec.Key)
			}
		}
	}
	// A later write to the same key replaces the value everywhere.
	if err := c.Replicas[3].Store.Put(ctx, "/jobs/0", "job", []byte("rewritten")); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Replicas {
		rec := c.WaitGet(r.Index, "/jobs/0", func(rec crdt.Record) bool { return string(rec.Payload) == "rewritten" })
		if rec.Author != c.Replicas[3].ID() {
			t.Fatalf("replica %d: author %s", r.Index, rec.Author)
		}
	}
}

// nextChange returns the next change on ch or fails after waitFor.
func nextChange(t *testing.T, ch <-chan crdt.Change) crdt.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return c
	case <-time.After(waitFor):
		t.Fatal("no change delivered")
	}
	return crdt.Change{}
}

func TestWatchDeliversChangesOnOtherReplicas(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w1 := c.Replicas[1].Store.Watch(ctx, "/jobs/")
	w2 := c.Replicas[2].Store.Watch(ctx, "/jobs")
	writer := c.Replicas[0]

	if err := writer.Store.Put(ctx, "/elsewhere/x", "job", []byte("not watched")); err != nil {
		t.Fatal(err)
	}
	if err := writer.Store.Put(ctx, "/jobsx", "job", []byte("not under /jobs")); err != nil {
		t.Fatal(err)
	}
	if err := writer.Store.Put(ctx, "/jobs/a", "job", []byte("A")); err != nil {
		t.Fatal(err)
	}
	for i, w := range []<-chan crdt.Change{w1, w2} {
		ch := nextChange(t, w)
		if ch.Kind != crdt.ChangePut || ch.Key != "/jobs/a" || string(ch.Record.Payload) != "A" || ch.Record.Author != writer.ID() {
			t.Fatalf("watcher %d: got %+v", i+1, ch)
		}
	}
	if err := writer.Store.Delete(ctx, "/jobs/a"); err != nil {
		t.Fatal(err)
	}
	for i, w := range []<-chan crdt.Change{w1, w2} {
		ch := nextChange(t, w)
		if ch.Kind != crdt.ChangeDelete || ch.Key != "/jobs/a" || ch.Record.Author != writer.ID() {
			t.Fatalf("watcher %d: got %+v", i+1, ch)
		}
	}
	for _, r := range c.Replicas {
		crdttest.WaitUntil(t, waitFor, func() error {
			_, err := r.Store.Get(ctx, "/jobs/a")
			if !errors.Is(err, crdt.ErrNotFound) {
				return fmt.Errorf("replica %d: %v", r.Index, err)
			}
			return nil
		})
	}
	// Ending the context closes the channel.
	cancel()
	for range w1 {
	}
}

func TestSlowWatcherDoesNotBlockAndIsToldToResync(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1, Configure: func(_ int, cfg *crdt.Config) {
		cfg.WatchBuffer = 4
	}})
	s := c.Replicas[0].Store
	ctx := context.Background()
	w := s.Watch(ctx, "/")
	// Local writes run the hooks before Put returns, so this is exact.
	for i := range 10 {
		if err := s.Put(ctx, fmt.Sprintf("/k/%d", i), "t", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if ch := <-w; ch.Kind != crdt.ChangePut || ch.Key != fmt.Sprintf("/k/%d", i) {
			t.Fatalf("change %d: %+v", i, ch)
		}
	}
	if ch := <-w; ch.Kind != crdt.ChangeOverflow {
		t.Fatalf("want overflow marker, got %+v", ch)
	}
	if got := crdttest.Metric(t, c.Replicas[0].Registry, "jobmesh_crdt_watch_dropped_total", nil); got != 7 {
		t.Fatalf("dropped = %v, want 7", got)
	}
	// Resync by Query sees everything, and delivery resumes.
	recs, err := s.Query(ctx, "/k")
	if err != nil || len(recs) != 10 {
		t.Fatalf("query: %d records, %v", len(recs), err)
	}
	// QueryKeys returns only the keys it is asked to keep, in key order.
	recs, err = s.QueryKeys(ctx, "/k", func(k string) bool { return k == "/k/3" || k == "/k/7" })
	if err != nil || len(recs) != 2 || recs[0].Key != "/k/3" || recs[1].Key != "/k/7" || recs[1].Payload[0] != 7 {
		t.Fatalf("QueryKeys: %+v, %v", recs, err)
	}
	if err := s.Put(ctx, "/k/next", "t", nil); err != nil {
		t.Fatal(err)
	}
	if ch := <-w; ch.Kind != crdt.ChangePut || ch.Key != "/k/next" {
		t.Fatalf("after resync: %+v", ch)
	}
}

func TestReplicaReopenedKeepsRecordsAndCatchesUp(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 3, Pebble: true})
	ctx := context.Background()
	if err := c.Replicas[0].Store.Put(ctx, "/jobs/before", "job", []byte("before")); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(2, "/jobs/before", nil)

	c.Stop(2)
	for i := range 5 {
		if err := c.Replicas[i%2].Store.Put(ctx, fmt.Sprintf("/jobs/during/%d", i), "job", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	c.Start(2)

	// Kept on disk: readable at once, before any sync.
	if rec, err := c.Replicas[2].Store.Get(ctx, "/jobs/before"); err != nil || string(rec.Payload) != "before" {
		t.Fatalf("record lost across reopen: %+v, %v", rec, err)
	}
	// Caught up from the others' head re-announcements, with no new write.
	for i := range 5 {
		c.WaitGet(2, fmt.Sprintf("/jobs/during/%d", i), nil)
	}
	recs, err := c.Replicas[2].Store.Query(ctx, "/jobs")
	if err != nil || len(recs) != 6 {
		t.Fatalf("after catch-up: %d records, %v", len(recs), err)
	}
	// And it writes again.
	if err := c.Replicas[2].Store.Put(ctx, "/jobs/after", "job", nil); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(0, "/jobs/after", nil)
}

func TestCloseLeavesOwnedResourcesUsable(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	ctx := context.Background()
	r := c.Replicas[0]
	s := r.Store
	w := s.Watch(ctx, "/")
	c.Stop(0)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, ok := <-w; ok {
		t.Fatal("watch channel not closed by Close")
	}
	if err := s.Put(ctx, "/jobs/x", "job", nil); !errors.Is(err, crdt.ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	if _, err := s.Get(ctx, "/jobs/x"); !errors.Is(err, crdt.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	// Datastore and PubSub still work: the topic can be joined again at once.
	if _, err := r.Datastore.Has(ctx, datastore.NewKey("/x")); err != nil {
		t.Fatalf("datastore closed by Store.Close: %v", err)
	}
	c.Start(0)
	c.WaitTopicMesh()
	if err := c.Replicas[1].Store.Put(ctx, "/jobs/y", "job", nil); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(0, "/jobs/y", nil)
}

func TestMetricsCountWritesAndDAGState(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	r := c.Replicas[0]
	ctx := context.Background()
	for i := range 3 {
		if err := r.Store.Put(ctx, fmt.Sprintf("/jobs/%d", i), "job", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Store.Delete(ctx, "/jobs/0"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"jobmesh_crdt_records_put_total":     3,
		"jobmesh_crdt_records_deleted_total": 1,
		"jobmesh_crdt_heads":                 1, // one writer: a single chain
		"jobmesh_crdt_max_height":            4, // one DAG node per write
	} {
		if got := crdttest.Metric(t, r.Registry, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := crdttest.Metric(t, r.Registry, "jobmesh_crdt_records_rejected_total", map[string]string{"reason": "bad_signature"}); got != 0 {
		t.Errorf("rejections without bad records: %v", got)
	}
}

// Concurrent writes to one key resolve the same way on every replica.
func TestConcurrentWritesConvergeToOneValue(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 5})
	ctx := context.Background()
	errs := make(chan error, len(c.Replicas))
	for _, r := range c.Replicas {
		go func() {
			if err := r.Store.Put(ctx, "/race", "job", []byte(fmt.Sprintf("from %d", r.Index))); err != nil {
				errs <- err
				return
			}
			errs <- r.Store.Put(ctx, fmt.Sprintf("/done/%d", r.Index), "job", nil)
		}()
	}
	for range c.Replicas {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	crdttest.WaitUntil(t, waitFor, func() error {
		var first string
		for _, r := range c.Replicas {
			done, err := r.Store.Query(ctx, "/done")
			if err != nil || len(done) != len(c.Replicas) {
				return fmt.Errorf("replica %d has %d of %d writers' markers (%v)", r.Index, len(done), len(c.Replicas), err)
			}
			rec, err := r.Store.Get(ctx, "/race")
			if err != nil {
				return err
			}
			if r.Index == 0 {
				first = string(rec.Payload)
			} else if string(rec.Payload) != first {
				return fmt.Errorf("replica 0 has %q, replica %d has %q", first, r.Index, rec.Payload)
			}
		}
		return nil
	})
}

// A batch is one DAG node on the writer and arrives whole on the others;
// a bad entry fails the batch before anything is written.
func TestPutBatchWritesOneDeltaReadableEverywhere(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 3, Configure: func(_ int, cfg *crdt.Config) {
		cfg.MaxPayload = 100
	}})
	ctx := context.Background()
	w := c.Replicas[0]
	// More records than one batch signature covers: they are signed in
	// groups of crdt.MaxBatchRecords, the last group here a lone record.
	n := crdt.MaxBatchRecords + 1
	var entries []crdt.Entry
	for i := range n {
		entries = append(entries, crdt.Entry{Key: fmt.Sprintf("/jobs/b/%d", i), Type: "job", Payload: []byte(fmt.Sprintf("v%d", i))})
	}
	if err := w.Store.PutBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	if got := crdttest.Metric(t, w.Registry, "jobmesh_crdt_max_height", nil); got != 1 {
		t.Errorf("%d records in one batch made a DAG of height %v, want 1", n, got)
	}
	if got := crdttest.Metric(t, w.Registry, "jobmesh_crdt_records_put_total", nil); got != float64(n) {
		t.Errorf("records put = %v, want %d", got, n)
	}
	for _, r := range c.Replicas {
		for i, e := range entries {
			rec := c.WaitGet(r.Index, e.Key, nil)
			if rec.Author != w.ID() || string(rec.Payload) != fmt.Sprintf("v%d", i) || rec.Type != "job" {
				t.Fatalf("replica %d read %+v for %s", r.Index, rec, e.Key)
			}
		}
	}
	bad := [][]crdt.Entry{
		{{Key: "/jobs/c/0", Type: "job"}, {Key: "/jobs/c/1", Type: "job", Payload: make([]byte, 101)}},
		{{Key: "/jobs/c/0", Type: "job"}, {Key: "jobs/c/1", Type: "job"}},
		{{Key: "/jobs/c/0", Type: "job"}, {Key: "/jobs/c/1", Type: "Bad Type"}},
	}
	wantErr := []error{crdt.ErrOversized, crdt.ErrInvalidKey, crdt.ErrInvalidType}
	for i, b := range bad {
		if err := w.Store.PutBatch(ctx, b); !errors.Is(err, wantErr[i]) {
			t.Errorf("bad batch %d: %v, want %v", i, err, wantErr[i])
		}
		if _, err := w.Store.Get(ctx, "/jobs/c/0"); !errors.Is(err, crdt.ErrNotFound) {
			t.Fatalf("bad batch %d wrote its good entry: %v", i, err)
		}
	}
}

// A replica new on the topic re-announces its heads when a peer joins, so
// records it wrote before anyone could hear them reach that peer at once,
// not at the next periodic re-announcement (an hour here) or through
// gossip (off here).
func TestNewReplicaGreetsPeersThatJoinLater(t *testing.T) {
	noGossip := pubsub.DefaultGossipSubParams()
	noGossip.Dlazy, noGossip.GossipFactor = 0, 0
	c := crdttest.New(t, crdttest.Options{
		Replicas:  2,
		PubSub:    []pubsub.Option{pubsub.WithGossipSubParams(noGossip)},
		Configure: func(_ int, cfg *crdt.Config) { cfg.RebroadcastInterval = time.Hour },
	})
	a, b := c.Replicas[0], c.Replicas[1]
	a.Host.ConnManager().Unprotect(b.ID(), "")
	if err := a.Host.Network().ClosePeer(b.ID()); err != nil {
		t.Fatal(err)
	}
	topic := c.Config(0).Topic
	crdttest.WaitUntil(t, 10*time.Second, func() error {
		if n := len(a.PubSub.ListPeers(topic)); n != 0 {
			return fmt.Errorf("replica 0 still sees %d peers on the topic", n)
		}
		return nil
	})
	if err := a.Store.Put(context.Background(), "/greet/a", "note", []byte("written alone")); err != nil {
		t.Fatal(err)
	}
	if err := b.Host.Connect(context.Background(), peer.AddrInfo{ID: a.ID(), Addrs: a.Host.Addrs()}); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(1, "/greet/a", nil)
}

// TestQueryKeysMatchesQuery: a filtered query lists keys without reading
// values, and returns what Query returns for the kept keys: keys that end
// in "v" or "p" segments, neither the prefix key itself nor anything of a
// sibling prefix, no deleted key, and records written by another replica.
func TestQueryKeysMatchesQuery(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	a, b := c.Replicas[0].Store, c.Replicas[1].Store
	ctx := context.Background()
	for _, k := range []string{"/q", "/q/v", "/q/p", "/q/v/v", "/q/a/p", "/q/del", "/qq/x", "/other"} {
		if err := a.Put(ctx, k, "t", []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put(ctx, "/q/remote", "t", []byte("remote")); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, "/q/del"); err != nil {
		t.Fatal(err)
	}
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		if _, err := a.Get(ctx, "/q/remote"); err != nil {
			return err
		}
		return nil
	})
	all := func(string) bool { return true }
	want, err := a.Query(ctx, "/q")
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.QueryKeys(ctx, "/q", all)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(rs []crdt.Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Key+"="+string(r.Payload))
		}
		return out
	}
	wantKeys := []string{"/q/a/p=/q/a/p", "/q/p=/q/p", "/q/remote=remote", "/q/v=/q/v", "/q/v/v=/q/v/v"}
	if !slices.Equal(keys(want), wantKeys) {
		t.Fatalf("Query: %v, want %v", keys(want), wantKeys)
	}
	if !slices.Equal(keys(got), wantKeys) {
		t.Fatalf("QueryKeys: %v, want %v", keys(got), wantKeys)
	}
	got, err = a.QueryKeys(ctx, "/", func(k string) bool { return strings.HasSuffix(k, "/v") })
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"/q/v=/q/v", "/q/v/v=/q/v/v"}; !slices.Equal(keys(got), w) {
		t.Fatalf("QueryKeys of the root: %v, want %v", keys(got), w)
	}
}
