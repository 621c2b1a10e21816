package processor

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
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

// TestRecordIndexMatchesQuery: while two replicas write a job's records,
// the index read on one of them converges to exactly what a query of the
// store returns, including after a watch overflow, and the index's own
// writes are visible at once.
func TestRecordIndexMatchesQuery(t *testing.T) {
	for _, buffer := range []int{1024, 2} { // 2: the watch overflows
		t.Run("watchbuffer="+strconv.Itoa(buffer), func(t *testing.T) {
			c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: func(_ int, cfg *crdt.Config) {
				cfg.WatchBuffer = buffer
			}})
			local, remote := c.Replicas[0].Store, c.Replicas[1].Store
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			x := newRecordIndex(local)
			changes := local.Watch(ctx, "/jobs")
			done := make(chan struct{})
			start := func() { go func() { defer close(done); x.run(changes, nil, nil) }() }
			defer func() { cancel(); <-done }()
			if buffer > 2 {
				start()
			}
			w := indexWriter{store: local, index: x}

			id := jobs.ID(sha256.Sum256([]byte("job")))
			micro := func(i int) jobs.ID { return jobs.ID(sha256.Sum256([]byte("micro" + strconv.Itoa(i)))) }
			put := func(s crdt.Writer, i int) {
				m := micro(i).String()
				author := local.Self().String()
				if s == remote {
					author = remote.Self().String()
				}
				if err := crdt.PutJSON(ctx, s, records.RedoKey(id, micro(i), author), records.RedoType, records.Redo{Micro: m, Exclude: []string{strconv.Itoa(i)}}); err != nil {
					t.Error(err)
				}
			}
			// The index's own write is there at once.
			put(w, 0)
			if r, err := x.records(ctx, id); err != nil || len(redoKeys(r)) != 1 {
				t.Fatalf("own write: %v, %v", r, err)
			}
			var wg sync.WaitGroup
			wg.Add(3)
			go func() {
				defer wg.Done()
				for i := 1; i < 60; i += 2 {
					put(w, i)
				}
			}()
			go func() {
				defer wg.Done()
				for i := 2; i < 60; i += 2 {
					put(remote, i)
				}
			}()
			go func() { // reads race the writes
				defer wg.Done()
				for range 50 {
					if _, err := x.records(ctx, id); err != nil {
						t.Error(err)
					}
				}
			}()
			wg.Wait()
			if buffer == 2 {
				// The watch was not read during the writes, so it overflowed.
				start()
			}
			crdttest.WaitUntil(t, 30*time.Second, func() error {
				got, err := x.records(ctx, id)
				if err != nil {
					return err
				}
				want, err := x.query(ctx, id)
				if err != nil {
					return err
				}
				g, wr := redoKeys(got), redoKeys(want)
				if len(wr) != 60 {
					return fmt.Errorf("store holds %d records", len(wr))
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
			})
			if dropped := crdttest.Metric(t, c.Replicas[0].Registry, "jobmesh_crdt_watch_dropped_total", nil); buffer == 2 && dropped == 0 {
				t.Fatal("the watch never overflowed: the reload path was not exercised")
			}
			// A delete reaches the index too.
			if err := remote.Delete(ctx, records.RedoKey(id, micro(2), remote.Self().String())); err != nil {
				t.Fatal(err)
			}
			crdttest.WaitUntil(t, 30*time.Second, func() error {
				got, err := x.records(ctx, id)
				if err != nil {
					return err
				}
				if g := redoKeys(got); len(g) != 59 || g[micro(2).String()].Micro != "" {
					return fmt.Errorf("index holds %d records after the delete", len(g))
				}
				return nil
			})
		})
	}
}

// TestIndexCommitCounters: the index's commitment counters, written in
// batches by two replicas, say what the full records say: which MicroJobs
// are committed, whether a MacroJob's every MicroJob is, and whether a
// processor other than a given one committed each.
func TestIndexCommitCounters(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	local, remote := c.Replicas[0].Store, c.Replicas[1].Store
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x := newRecordIndex(local)
	changes := local.Watch(ctx, "/jobs")
	done := make(chan struct{})
	go func() { defer close(done); x.run(changes, nil, nil) }()
	defer func() { cancel(); <-done }()
	w := indexWriter{store: local, index: x}

	id := jobs.ID(sha256.Sum256([]byte("job")))
	micro := func(i int) jobs.ID { return jobs.ID(sha256.Sum256([]byte("micro" + strconv.Itoa(i)))) }
	commit := func(s *crdt.Store, i int) crdt.Entry {
		d := microjob.Disclosure{Version: microjob.RecordVersion, JobID: id, MicroID: micro(i), Processor: s.Self().String(),
			Wallet: "0x00000000000000000000000000000000000000a1", BlockIndices: []uint64{uint64(i)}, BlockHashes: [][32]byte{{1}}}
		cm, err := d.Commitment()
		if err != nil {
			t.Fatal(err)
		}
		return crdt.Entry{Key: records.CommitmentKey(cm), Type: records.CommitType, Payload: cm.Encode()}
	}
	// Local commits 0..9, remote 5..14: 5..9 by both.
	var mine, theirs []crdt.Entry
	for i := range 10 {
		mine = append(mine, commit(local, i))
		theirs = append(theirs, commit(remote, i+5))
	}
	if err := w.PutBatch(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := remote.PutBatch(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	self := local.Self().String()
	if x.mayRequest(id) {
		// Loaded by the writes above, and holding no request.
		if _, err := x.records(ctx, id); err != nil {
			t.Fatal(err)
		}
		if x.mayRequest(id) {
			t.Fatal("an index of commitments only says it may hold requests")
		}
	}
	crdttest.WaitUntil(t, 30*time.Second, func() error {
		got, err := x.committed(ctx, id)
		if err != nil {
			return err
		}
		recs, err := x.query(ctx, id)
		if err != nil {
			return err
		}
		want := map[jobs.ID]bool{}
		for _, c := range recs.Commits {
			want[c.MicroID] = true
		}
		if len(want) != 15 || !maps.Equal(got, want) {
			return fmt.Errorf("counters say %d MicroJobs committed, the store %d", len(got), len(want))
		}
		// A MacroJob of MicroJobs 10..14 is fully committed; one that
		// adds MicroJob 15 is not.
		m := &jobs.MacroJob{}
		for i := 10; i < 15; i++ {
			m.Micros = append(m.Micros, jobs.MicroJob{ID: micro(i)})
		}
		if full, err := x.macroCommitted(ctx, id, m, nil); err != nil || !full {
			return fmt.Errorf("a committed MacroJob: full %v, err %v", full, err)
		}
		m.Micros = append(m.Micros, jobs.MicroJob{ID: micro(15)})
		if full, err := x.macroCommitted(ctx, id, m, nil); err != nil || full {
			return fmt.Errorf("a MacroJob with an uncommitted MicroJob: full %v, err %v", full, err)
		}
		for i := range 15 {
			other, err := x.committedByOther(ctx, id, micro(i), self)
			if err != nil {
				return err
			}
			if other != (i >= 5) {
				return fmt.Errorf("MicroJob %d: committed by another = %v", i, other)
			}
		}
		return nil
	})
	// A commitment changes the index's version, not its requests'.
	ver, reqVer := x.version(id), x.requestsVersion(id)
	if err := w.PutBatch(ctx, []crdt.Entry{commit(local, 20)}); err != nil {
		t.Fatal(err)
	}
	if x.version(id) == ver || x.requestsVersion(id) != reqVer {
		t.Fatalf("after a commitment: version %d → %d, requests' version %d → %d", ver, x.version(id), reqVer, x.requestsVersion(id))
	}
	// A redo record turns the request counter on and changes the
	// requests' version.
	if err := crdt.PutJSON(ctx, w, records.RedoKey(id, micro(0), self), records.RedoType, records.Redo{Micro: micro(0).String(), Exclude: []string{self}}); err != nil {
		t.Fatal(err)
	}
	if !x.mayRequest(id) {
		t.Fatal("the index holds a redo but says it holds no request")
	}
	if x.requestsVersion(id) == reqVer {
		t.Fatal("a redo record left the requests' version unchanged")
	}
}

// TestWatchOverflowInterruptsRoomWaits: a watch that overflowed may have
// dropped a request for work, so the worker stops waiting for a room's
// queue and looks, as it does for a request it sees.
func TestWatchOverflowInterruptsRoomWaits(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	x := newRecordIndex(c.Replicas[0].Store)
	interrupted := false
	w := &Worker{known: map[jobs.ID]*jobState{{1}: {stopWait: func() { interrupted = true }}}, wake: make(chan struct{}, 1)}
	changes := make(chan crdt.Change, 2)
	changes <- crdt.Change{Kind: crdt.ChangeOverflow}
	close(changes)
	x.run(changes, w.noticeRecord, w.interruptWaits)
	if !interrupted {
		t.Fatal("an overflow did not interrupt the wait for a room's queue")
	}
}
