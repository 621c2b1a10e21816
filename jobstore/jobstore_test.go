package jobstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore/query"
	ipld "github.com/ipfs/go-ipld-format"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/records"
)

const waitFor = 20 * time.Second

// clock is a settable clock shared by a test's managers.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// manager returns a Manager over replica i of c, with the mesh's author
// policy and c's shared block store.
func manager(t *testing.T, c *crdttest.Cluster, i int, clk *clock) *jobstore.Manager {
	return managerWith(t, c, i, clk, nil)
}

// managerWith is manager with its Config changed by set (nil: none).
func managerWith(t testing.TB, c *crdttest.Cluster, i int, clk *clock, set func(*jobstore.Config)) *jobstore.Manager {
	t.Helper()
	cfg := c.Config(i)
	cfg.AuthorPolicy = records.AuthorPolicy()
	jc := jobstore.Config{Store: cfg, Blocks: strictDeleter{c.Blocks}, Retention: time.Hour, Now: clk.Now}
	if set != nil {
		set(&jc)
	}
	m, err := jobstore.New(jc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// strictDeleter deletes as the node's block layer does (ipfs.Node): a
// block that is not there is an error, ipld's not-found. The replicas of
// a crdttest cluster share one block store, so the second to drop a job
// finds its blocks gone.
type strictDeleter struct{ blockstore.Blockstore }

func (d strictDeleter) DeleteBlock(ctx context.Context, c cid.Cid) error {
	if ok, err := d.Has(ctx, c); err != nil || !ok {
		return errors.Join(err, ipld.ErrNotFound{Cid: c})
	}
	return d.Blockstore.DeleteBlock(ctx, c)
}

func jobID(s string) jobs.ID { return jobs.ID(sha256.Sum256([]byte(s))) }

// tookKey is a job-level key of job id that replica r may write.
func tookKey(id jobs.ID, r *crdttest.Replica, macro uint64) string {
	return records.TookKey(id, macro, r.ID().String())
}

func waitGet(t *testing.T, s *crdt.Store, key string) crdt.Record {
	t.Helper()
	var rec crdt.Record
	crdttest.WaitUntil(t, waitFor, func() error {
		var err error
		rec, err = s.Get(context.Background(), key)
		return err
	})
	return rec
}

// TestJobStoreCarriesOnlyItsJobsRecords: the replicas holding a job's
// store share its job-level records; a mesh-level record or one of
// another job is refused on write.
func TestJobStoreCarriesOnlyItsJobsRecords(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a, b := jobID("a"), jobID("b")
	m0, m1 := manager(t, c, 0, clk), manager(t, c, 1, clk)
	s0, err := m0.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := m1.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := m0.Open(ctx, a); again != s0 {
		t.Fatal("a second Open opened another store")
	}
	key := tookKey(a, c.Replicas[0], 1)
	if err := s0.Put(ctx, key, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	if rec := waitGet(t, s1, key); rec.Author != c.Replicas[0].ID() {
		t.Fatalf("author %s", rec.Author)
	}
	for _, bad := range []string{
		tookKey(b, c.Replicas[0], 1),                   // another job's
		records.AdvertKey(c.Replicas[0].ID().String()), // the mesh's
		records.JobKey(a),                              // the job's announcement is mesh level
	} {
		if err := s0.Put(ctx, bad, records.TookType, nil); !errors.Is(err, crdt.ErrPolicy) {
			t.Errorf("Put(%q) = %v, want ErrPolicy", bad, err)
		}
	}
	// Another replica's key is refused as in the mesh store.
	if err := s0.Put(ctx, tookKey(a, c.Replicas[1], 2), records.TookType, nil); !errors.Is(err, crdt.ErrPolicy) {
		t.Errorf("a took record under another peer's key: %v", err)
	}
}

// TestForeignRecordOnAJobTopicIsRefused: a node that writes a record of
// job B, or a mesh record, into job A's store (its own software skips the
// check) reaches no honest replica.
func TestForeignRecordOnAJobTopicIsRefused(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a, b := jobID("a"), jobID("b")
	honest := manager(t, c, 1, clk)
	s1, err := honest.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	evil, foreign := writeForeign(t, c, a, b)
	// A good record written after them arrives; the foreign ones do not.
	good := tookKey(a, c.Replicas[0], 1)
	if err := evil.Put(ctx, good, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	waitGet(t, s1, good)
	// Each foreign record arrives, and is refused.
	for _, k := range foreign {
		crdttest.WaitUntil(t, waitFor, func() error {
			_, err := s1.Get(ctx, k)
			if errors.Is(err, crdt.ErrPolicy) && errors.Is(err, jobstore.ErrForeignRecord) {
				return nil
			}
			return fmt.Errorf("honest replica read %q: %v, want a refusal", k, err)
		})
	}
	all, err := s1.Query(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Key != good {
		t.Fatalf("honest replica holds %d records", len(all))
	}
}

// writeForeign opens job a's store on replica 0 with no policy at all,
// as an attacker would, and writes into it a record of job b and a mesh
// record; it returns the store and the two keys.
func writeForeign(t *testing.T, c *crdttest.Cluster, a, b jobs.ID) (*crdt.Store, []string) {
	t.Helper()
	ctx := context.Background()
	cfg := c.Config(0)
	cfg.Namespace, cfg.Topic, cfg.Registerer = jobstore.Namespace(a), jobstore.Topic(a), nil
	evil, err := crdt.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { evil.Close() })
	foreign := []string{tookKey(b, c.Replicas[0], 1), records.AdvertKey(c.Replicas[0].ID().String())}
	for _, k := range foreign {
		if err := evil.Put(ctx, k, records.TookType, nil); err != nil {
			t.Fatal(err)
		}
	}
	return evil, foreign
}

// keysUnder counts replica i's datastore keys under prefix.
func keysUnder(t *testing.T, c *crdttest.Cluster, i int, prefix string) int {
	t.Helper()
	res, err := c.Replicas[i].Datastore.Query(context.Background(), query.Query{Prefix: prefix, KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	all, err := res.Rest()
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// TestRetentionDropsAJobStore: a job store is kept for the retention after
// its job ends, then dropped: no key under its namespace, none of its DAG
// blocks, no manifest. Another job's store is untouched.
func TestRetentionDropsAJobStore(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a, b := jobID("a"), jobID("b")
	ms := []*jobstore.Manager{manager(t, c, 0, clk), manager(t, c, 1, clk)}
	var blocks []cid.Cid
	for i, m := range ms {
		for _, id := range []jobs.ID{a, b} {
			s, err := m.Open(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for macro := range uint64(3) {
				if err := s.Put(ctx, tookKey(id, c.Replicas[i], macro), records.TookType, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, m := range ms {
		s, _ := m.Get(a)
		crdttest.WaitUntil(t, waitFor, func() error {
			recs, err := s.Query(ctx, records.JobKey(a))
			if err != nil || len(recs) != 6 {
				return fmt.Errorf("%d of 6 records, %v", len(recs), err)
			}
			return nil
		})
		merged, err := s.Merged(ctx)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, merged...)
	}
	end := clk.Now()
	for _, m := range ms {
		if err := m.End(ctx, a, end); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(time.Hour - time.Second)
	for i, m := range ms {
		if dropped, err := m.Sweep(ctx); err != nil || len(dropped) != 0 {
			t.Fatalf("manager %d dropped %v (%v) before the retention", i, dropped, err)
		}
	}
	clk.Add(time.Second)
	for i, m := range ms {
		dropped, err := m.Sweep(ctx)
		if err != nil || len(dropped) != 1 || dropped[0] != a {
			t.Fatalf("manager %d dropped %v (%v), want job a", i, dropped, err)
		}
		if _, ok := m.Get(a); ok {
			t.Fatalf("manager %d still holds job a", i)
		}
		if n := keysUnder(t, c, i, jobstore.Namespace(a)); n != 0 {
			t.Fatalf("replica %d keeps %d keys of job a", i, n)
		}
		if n := keysUnder(t, c, i, jobstore.Namespace(b)); n == 0 {
			t.Fatalf("replica %d lost job b's store", i)
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("job a merged %d blocks", len(blocks))
	}
	for _, bl := range blocks {
		if has, err := c.Blocks.Has(ctx, bl); err != nil || has {
			t.Fatalf("block %s of job a is still stored (%v)", bl, err)
		}
	}
	s, _ := ms[0].Get(b)
	if recs, err := s.Query(ctx, records.JobKey(b)); err != nil || len(recs) < 3 {
		t.Fatalf("job b's store reads %d records, %v", len(recs), err)
	}
}

// TestResumeReopensAndDrops: a node that restarts reopens the stores it
// held, with their records, and drops one whose retention passed while
// it was down.
func TestResumeReopensAndDrops(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	running, ended := jobID("running"), jobID("ended")
	m := manager(t, c, 0, clk)
	for _, id := range []jobs.ID{running, ended} {
		s, err := m.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, tookKey(id, c.Replicas[0], 0), records.TookType, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.End(ctx, ended, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open(ctx, running); !errors.Is(err, jobstore.ErrClosed) {
		t.Fatalf("Open after Close: %v", err)
	}
	clk.Add(2 * time.Hour)
	again := manager(t, c, 0, clk)
	reopened, err := again.Resume(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reopened) != 1 || reopened[0] != running {
		t.Fatalf("reopened %v, want only the running job", reopened)
	}
	s, ok := again.Get(running)
	if !ok {
		t.Fatal("the running job's store is not open")
	}
	if _, err := s.Get(ctx, tookKey(running, c.Replicas[0], 0)); err != nil {
		t.Fatalf("the reopened store lost its record: %v", err)
	}
	if n := keysUnder(t, c, 0, jobstore.Namespace(ended)); n != 0 {
		t.Fatalf("%d keys of the ended job left", n)
	}
	if _, ok := again.Get(ended); ok {
		t.Fatal("the ended job's store was reopened")
	}
	if !strings.HasPrefix(jobstore.Namespace(running), jobstore.Root+"/") {
		t.Fatal("namespace outside the root")
	}
}

// TestDroppedJobIsNotReopened: after its retention a job's store is
// dropped; a late write to it through the router (a holder record, a
// straggler's re-run) is refused instead of opening a store nothing would
// end, a Join is a no-op, and the drop is remembered across a restart
// until Forget has passed.
func TestDroppedJobIsNotReopened(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	id := jobID("late")
	m := manager(t, c, 0, clk)
	r := jobstore.NewRouter(c.Replicas[0].Store, m)
	key := tookKey(id, c.Replicas[0], 0)
	if err := r.Put(ctx, key, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.End(ctx, id, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if dropped, err := m.Sweep(ctx); err != nil || len(dropped) != 1 {
		t.Fatalf("dropped %v, %v", dropped, err)
	}
	if err := r.Put(ctx, key, records.TookType, nil); !errors.Is(err, jobstore.ErrDropped) {
		t.Fatalf("a late write: %v", err)
	}
	if err := r.Join(ctx, id); err != nil {
		t.Fatalf("joining a dropped job: %v", err)
	}
	if _, ok := m.Get(id); ok || keysUnder(t, c, 0, jobstore.Namespace(id)) != 0 {
		t.Fatal("the dropped job's store was opened again")
	}

	// A restart remembers the drop.
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	again := manager(t, c, 0, clk)
	if reopened, err := again.Resume(ctx); err != nil || len(reopened) != 0 {
		t.Fatalf("reopened %v, %v", reopened, err)
	}
	if _, err := again.Open(ctx, id); !errors.Is(err, jobstore.ErrDropped) {
		t.Fatalf("Open of a dropped job after a restart: %v", err)
	}
	// Past Forget the job is forgotten: its manifest is gone.
	clk.Add(jobstore.DefaultForget)
	if _, err := again.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, c, 0, "/jobmesh/v2/jobmeta"); n != 0 {
		t.Fatalf("%d manifests left past Forget", n)
	}
}
