package jobindex

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// redoKeys are the redo records in r, by MicroJob.
func redoKeys(r *finish.Records) map[string]records.Redo {
	out := map[string]records.Redo{}
	for _, q := range r.Requests {
		if q.Redo != nil {
			out[q.Redo.Micro] = *q.Redo
		}
	}
	return out
}

// fixture is an index over the first of two replicas, fed by a watch.
type fixture struct {
	c             *crdttest.Cluster
	local, remote *crdt.Store
	x             *Index
	start         func() // starts feeding the index
}

// newFixture makes a fixture whose watch holds buffer changes; the index
// is fed at once unless later is set.
func newFixture(t *testing.T, ctx context.Context, buffer int, later bool) *fixture {
	c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: func(_ int, cfg *crdt.Config) {
		if buffer > 0 {
			cfg.WatchBuffer = buffer
		}
	}})
	f := &fixture{c: c, local: c.Replicas[0].Store, remote: c.Replicas[1].Store}
	f.x = New(f.local)
	ctx, cancel := context.WithCancel(ctx)
	changes := f.local.Watch(ctx, records.JobsPrefix)
	done := make(chan struct{})
	var once sync.Once
	f.start = func() { once.Do(func() { go func() { defer close(done); f.x.Run(changes, nil, nil) }() }) }
	t.Cleanup(func() { cancel(); f.start(); <-done })
	if !later {
		f.start()
	}
	return f
}

var testJob = jobs.ID(sha256.Sum256([]byte("job")))

func micro(i int) jobs.ID { return jobs.ID(sha256.Sum256([]byte("micro" + strconv.Itoa(i)))) }

// putRedo writes a redo record of MicroJob i through s, authored by s's
// replica.
func (f *fixture) putRedo(t *testing.T, ctx context.Context, s crdt.Writer, author *crdt.Store, i int) {
	m := micro(i).String()
	if err := crdt.PutJSON(ctx, s, records.RedoKey(testJob, micro(i), author.Self().String()), records.RedoType, records.Redo{Micro: m, Exclude: []string{strconv.Itoa(i)}}); err != nil {
		t.Error(err)
	}
}

// sameRedos says how the index's redo records differ from the store's,
// which must hold n of them.
func (f *fixture) sameRedos(ctx context.Context, n int) error {
	got, err := f.x.Records(ctx, testJob)
	if err != nil {
		return err
	}
	want, err := f.x.Query(ctx, testJob)
	if err != nil {
		return err
	}
	g, wr := redoKeys(got), redoKeys(want)
	if len(wr) != n {
		return fmt.Errorf("store holds %d records, want %d", len(wr), n)
	}
	if len(g) != len(wr) {
		return fmt.Errorf("index holds %d records, store %d", len(g), len(wr))
	}
	for k, v := range wr {
		if g, ok := g[k]; !ok || g.Micro != v.Micro || g.Exclude[0] != v.Exclude[0] {
			return fmt.Errorf("index lacks or differs at %s", k)
		}
	}
	return nil
}

// TestRecordIndexMatchesQuery: while two replicas write a job's records,
// the index read on one of them converges to exactly what a query of the
// store returns, including after a watch overflow, and the index's own
// writes are visible at once.
func TestRecordIndexMatchesQuery(t *testing.T) {
	for _, buffer := range []int{1024, 2} { // 2: the watch overflows
		t.Run("watchbuffer="+strconv.Itoa(buffer), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, ctx, buffer, buffer == 2)
			w := f.x.Writer()
			// The index's own write is there at once.
			f.putRedo(t, ctx, w, f.local, 0)
			if r, err := f.x.Records(ctx, testJob); err != nil || len(redoKeys(r)) != 1 {
				t.Fatalf("own write: %v, %v", r, err)
			}
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := 1; i < 60; i += 2 {
					f.putRedo(t, ctx, w, f.local, i)
				}
			})
			wg.Go(func() {
				for i := 2; i < 60; i += 2 {
					f.putRedo(t, ctx, f.remote, f.remote, i)
				}
			})
			wg.Go(func() { // reads race the writes
				for range 50 {
					if _, err := f.x.Records(ctx, testJob); err != nil {
						t.Error(err)
					}
				}
			})
			wg.Wait()
			// With buffer 2 the watch was not read during the writes, so
			// it overflowed.
			f.start()
			crdttest.WaitUntil(t, 30*time.Second, func() error { return f.sameRedos(ctx, 60) })
			if dropped := crdttest.Metric(t, f.c.Replicas[0].Registry, "jobmesh_crdt_watch_dropped_total", nil); buffer == 2 && dropped == 0 {
				t.Fatal("the watch never overflowed: the reload path was not exercised")
			}
			// A delete reaches the index too.
			if err := f.remote.Delete(ctx, records.RedoKey(testJob, micro(2), f.remote.Self().String())); err != nil {
				t.Fatal(err)
			}
			crdttest.WaitUntil(t, 30*time.Second, func() error { return f.sameRedos(ctx, 59) })
		})
	}
}

// commitEntry is the store entry of a commitment of MicroJob i by s's
// replica.
func commitEntry(t *testing.T, s *crdt.Store, i int) crdt.Entry {
	d := microjob.Disclosure{Version: microjob.RecordVersion, JobID: testJob, MicroID: micro(i), Processor: s.Self().String(),
		Wallet: "0x00000000000000000000000000000000000000a1", BlockIndices: []uint64{uint64(i)}, BlockHashes: [][32]byte{{1}}}
	cm, err := d.Commitment()
	if err != nil {
		t.Fatal(err)
	}
	return crdt.Entry{Key: records.CommitmentKey(cm), Type: records.CommitType, Payload: cm.Encode()}
}

// sameProgress says how the index's progress differs from what the
// store's records show: local committed MicroJobs 0..9, remote 5..14.
func (f *fixture) sameProgress(ctx context.Context) error {
	got, err := f.x.Progress(ctx, testJob, 1)
	if err != nil {
		return err
	}
	recs, err := f.x.Query(ctx, testJob)
	if err != nil {
		return err
	}
	want := finish.ProgressOf(recs, 1)
	self := f.local.Self().String()
	for i := range 16 {
		if got.Committed(micro(i)) != want.Committed(micro(i)) || got.Committed(micro(i)) != (i < 15) {
			return fmt.Errorf("MicroJob %d: committed %v, the store says %v", i, got.Committed(micro(i)), want.Committed(micro(i)))
		}
		if other := got.CommittedByOther(micro(i), self); other != (i >= 5 && i < 15) {
			return fmt.Errorf("MicroJob %d: committed by another = %v", i, other)
		}
	}
	// A MacroJob of MicroJobs 10..14 is fully committed; one that adds
	// MicroJob 15 is not.
	m := &jobs.MacroJob{}
	for i := 10; i < 15; i++ {
		m.Micros = append(m.Micros, jobs.MicroJob{ID: micro(i)})
	}
	if !got.MacroFull(m, nil) {
		return fmt.Errorf("a committed MacroJob is not full")
	}
	m.Micros = append(m.Micros, jobs.MicroJob{ID: micro(15)})
	if got.MacroFull(m, nil) {
		return fmt.Errorf("a MacroJob with an uncommitted MicroJob is full")
	}
	return nil
}

// TestIndexCommitCounters: the index's commitment counters, written in
// batches by two replicas, say what the full records say: which MicroJobs
// are committed, whether a MacroJob's every MicroJob is, and whether a
// processor other than a given one committed each.
func TestIndexCommitCounters(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ctx, 0, false)
	x, w := f.x, f.x.Writer()
	// Local commits 0..9, remote 5..14: 5..9 by both.
	var mine, theirs []crdt.Entry
	for i := range 10 {
		mine = append(mine, commitEntry(t, f.local, i))
		theirs = append(theirs, commitEntry(t, f.remote, i+5))
	}
	if err := w.PutBatch(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := f.remote.PutBatch(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if x.MayRequest(testJob) {
		// Loaded by the writes above, and holding no request.
		if _, err := x.Records(ctx, testJob); err != nil {
			t.Fatal(err)
		}
		if x.MayRequest(testJob) {
			t.Fatal("an index of commitments only says it may hold requests")
		}
	}
	crdttest.WaitUntil(t, 30*time.Second, func() error { return f.sameProgress(ctx) })
	// A commitment changes the index's version, not its requests'.
	ver, reqVer := x.Version(testJob), x.RequestsVersion(testJob)
	if err := w.PutBatch(ctx, []crdt.Entry{commitEntry(t, f.local, 20)}); err != nil {
		t.Fatal(err)
	}
	if x.Version(testJob) == ver || x.RequestsVersion(testJob) != reqVer {
		t.Fatalf("after a commitment: version %d → %d, requests' version %d → %d", ver, x.Version(testJob), reqVer, x.RequestsVersion(testJob))
	}
	if p, err := x.Progress(ctx, testJob, 1); err != nil || !p.Committed(micro(20)) {
		t.Fatalf("the progress lacks the index's own commitment (err %v)", err)
	}
	// A redo record turns the request counter on and changes the
	// requests' version.
	f.putRedo(t, ctx, w, f.local, 0)
	if !x.MayRequest(testJob) {
		t.Fatal("the index holds a redo but says it holds no request")
	}
	if x.RequestsVersion(testJob) == reqVer {
		t.Fatal("a redo record left the requests' version unchanged")
	}
}

// TestAggregatesAreNotIndexed: a MacroJob aggregate is read as the records
// it carries, never as itself: the index neither loads it nor takes it
// from the watch (a whole-job read would decode its MacroJob's envelopes
// once more), though its writer counts as heard from.
func TestAggregatesAreNotIndexed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, ctx, 0, false)
	local, remote := f.local.Self().String(), f.remote.Self().String()
	committed, disclosed := records.CommittedKey(testJob, 0, local), records.DisclosedKey(testJob, 0, remote)
	if err := f.local.Put(ctx, committed, records.CommittedType, []byte("carried envelopes")); err != nil {
		t.Fatal(err)
	}
	f.putRedo(t, ctx, f.local, f.local, 0)
	if _, err := f.x.Records(ctx, testJob); err != nil { // loads the index
		t.Fatal(err)
	}
	// Written after the load by a replica that writes nothing else:
	// reaches the index through the watch.
	if err := f.remote.Put(ctx, disclosed, records.DisclosedType, []byte("carried envelopes")); err != nil {
		t.Fatal(err)
	}
	crdttest.WaitUntil(t, 30*time.Second, func() error {
		f.x.mu.Lock()
		defer f.x.mu.Unlock()
		if _, ok := f.x.jobs[testJob].heard[remote]; !ok {
			return fmt.Errorf("the aggregate's writer is not heard from")
		}
		return nil
	})
	f.x.mu.Lock()
	defer f.x.mu.Unlock()
	for _, k := range []string{committed, disclosed} {
		if _, ok := f.x.jobs[testJob].entries[k]; ok {
			t.Errorf("the index holds aggregate %s", k)
		}
	}
}
