package ipfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/namespace"
	"github.com/ipfs/go-datastore/query"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/p2p"
)

// testClock is an injected clock the test moves by hand.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// gcNode is a node on a real loopback host with an injected clock, its
// datastore and metrics at hand.
type gcNode struct {
	testNode
	clock *testClock
	store ds.Batching
	reg   *prometheus.Registry
}

func newGCNode(t *testing.T, mutate func(*Config)) gcNode {
	t.Helper()
	cfg := DefaultConfig()
	cfg.StagingDir = t.TempDir()
	if mutate != nil {
		mutate(&cfg)
	}
	key, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	pc := p2p.LoopbackConfig()
	pc.TopicDiscovery = false
	h, err := p2p.New(context.Background(), p2p.Params{Config: pc, Identity: key})
	if err != nil {
		t.Fatal(err)
	}
	clock := newTestClock()
	store := dssync.MutexWrap(ds.NewMapDatastore())
	reg := prometheus.NewRegistry()
	// The node's layout: the block layer's datastore is under /blocks.
	n, err := New(context.Background(), Params{Config: cfg, Host: h, Routing: h.DHT, Datastore: namespace.Wrap(store, ds.NewKey("/blocks")),
		Now: clock.Now, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(); h.Close() })
	return gcNode{testNode: testNode{h: h, Node: n}, clock: clock, store: store, reg: reg}
}

// blockCount counts the blocks in the node's datastore, without the
// block layer's help: the keys /blocks/<multihash>.
func (g gcNode) blockCount(t *testing.T) int {
	t.Helper()
	res, err := g.store.Query(context.Background(), query.Query{Prefix: blockstore.BlockPrefix.String(), KeysOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	es, err := res.Rest()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if ds.RawKey(e.Key).Parent().String() == "/blocks" {
			n++
		}
	}
	return n
}

func (g gcNode) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := g.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		total := 0.0
	metrics:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(m, labels[i], labels[i+1]) {
					continue metrics
				}
			}
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
		return total
	}
	return 0
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// dagBlocks counts the local blocks of the DAG under c.
func (g gcNode) dagBlocks(t *testing.T, c cid.Cid) int {
	t.Helper()
	seen := map[string]struct{}{}
	if _, err := g.walkLocal(context.Background(), c, seen); err != nil {
		t.Fatal(err)
	}
	return len(seen)
}

func (g gcNode) complete(t *testing.T, c cid.Cid) bool {
	t.Helper()
	ok, err := g.localComplete(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestGCKeepsPinsAndRecentBlocks: a GC deletes the blocks nothing keeps
// and keeps a pinned DAG whole (blocks it shares with unpinned content
// included) and every block written within the grace period.
func TestGCKeepsPinsAndRecentBlocks(t *testing.T) {
	ctx := context.Background()
	g := newGCNode(t, nil)
	shared := randomBytes(700<<10, 10)
	pinned, err := g.AddDir(ctx, map[string][]byte{"shared": shared, "own": randomBytes(300<<10, 11)})
	if err != nil {
		t.Fatal(err)
	}
	alsoShared, err := g.AddFile(ctx, bytes.NewReader(shared)) // same blocks as a file of pinned
	if err != nil {
		t.Fatal(err)
	}
	garbage, err := g.AddFile(ctx, bytes.NewReader(randomBytes(900<<10, 12)))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Pin(ctx, pinned, "job:1"); err != nil {
		t.Fatal(err)
	}
	before := g.blockCount(t)
	// Everything is recent: nothing goes.
	if res, err := g.GC(ctx); err != nil || res.BlocksFreed != 0 {
		t.Fatalf("GC within the grace period: %+v, %v", res, err)
	}
	g.clock.Advance(g.cfg.GCGrace + time.Second)
	fresh, err := g.AddFile(ctx, bytes.NewReader(randomBytes(500<<10, 13)))
	if err != nil {
		t.Fatal(err)
	}
	nGarbage, nFresh := g.dagBlocks(t, garbage), g.dagBlocks(t, fresh)
	res, err := g.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.complete(t, garbage) {
		t.Fatal("unpinned old content survived the GC")
	}
	if !g.complete(t, pinned) || !g.complete(t, alsoShared) {
		t.Fatal("the pinned DAG (or its blocks shared with unpinned content) lost a block")
	}
	if !g.complete(t, fresh) {
		t.Fatal("content written within the grace period was collected")
	}
	if res.BlocksFreed != nGarbage || g.blockCount(t) != before+nFresh-nGarbage {
		t.Fatalf("GC freed %d blocks (%+v), want %d; %d left of %d+%d", res.BlocksFreed, res, nGarbage, g.blockCount(t), before, nFresh)
	}
	if got := g.StoredBytes(); got != res.BytesKept || got <= 0 {
		t.Fatalf("stored bytes %d, GC kept %d", got, res.BytesKept)
	}
	// Past the grace period the fresh content goes too; the pin stays.
	g.clock.Advance(2 * g.cfg.GCGrace)
	if _, err := g.GC(ctx); err != nil {
		t.Fatal(err)
	}
	if g.complete(t, fresh) || !g.complete(t, pinned) {
		t.Fatal("second GC: wrong blocks kept")
	}
	r, err := g.Cat(ctx, alsoShared)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	if !bytes.Equal(got, shared) {
		t.Fatal("pinned content no longer reads back")
	}
	if g.metric(t, "jobmesh_ipfs_gc_runs_total", "trigger", "manual", "result", "ok") != 3 ||
		g.metric(t, "jobmesh_ipfs_gc_blocks_freed_total") != float64(nGarbage+nFresh) ||
		g.metric(t, "jobmesh_ipfs_stored_bytes") != float64(g.StoredBytes()) {
		t.Fatal("GC metrics do not match")
	}
}

// TestPinOwnersAndExpiry: a CID pinned by two owners stays until both
// let go; Release keeps it for the retention period, then the GC takes
// the pin and the blocks.
func TestPinOwnersAndExpiry(t *testing.T) {
	ctx := context.Background()
	g := newGCNode(t, func(c *Config) { c.PinRetention = time.Hour })
	c, err := g.AddFile(ctx, bytes.NewReader(randomBytes(600<<10, 20)))
	if err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"job:a", "output:a"} {
		if err := g.Pin(ctx, c, owner); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"", "a/b", "with space", string(make([]byte, 200))} {
		if err := g.Pin(ctx, c, bad); !errors.Is(err, ErrInvalidOwner) {
			t.Fatalf("owner %q: %v", bad, err)
		}
	}
	if err := g.Unpin(ctx, c, "output:a"); err != nil {
		t.Fatal(err)
	}
	g.clock.Advance(10 * g.cfg.GCGrace)
	if _, err := g.GC(ctx); err != nil || !g.complete(t, c) {
		t.Fatalf("one owner left: GC %v, complete %v", err, g.complete(t, c))
	}
	if err := g.Release(ctx, "job:a"); err != nil {
		t.Fatal(err)
	}
	pins, err := g.Pins(ctx)
	if err != nil || len(pins) != 1 || !pins[0].Expires.Equal(g.clock.Now().Add(time.Hour)) {
		t.Fatalf("pins after Release: %+v, %v", pins, err)
	}
	g.clock.Advance(59 * time.Minute)
	if ok, err := g.IsPinned(ctx, c); err != nil || !ok {
		t.Fatalf("within the retention period: pinned %v, %v", ok, err)
	}
	if _, err := g.GC(ctx); err != nil || !g.complete(t, c) {
		t.Fatal("released content collected within the retention period")
	}
	g.clock.Advance(2 * time.Minute)
	if ok, _ := g.IsPinned(ctx, c); ok {
		t.Fatal("still pinned after the retention period")
	}
	res, err := g.GC(ctx)
	if err != nil || res.PinsExpired != 1 || g.complete(t, c) {
		t.Fatalf("after the retention period: %+v, %v", res, err)
	}
	if pins, _ := g.Pins(ctx); len(pins) != 0 {
		t.Fatalf("expired pins left: %+v", pins)
	}
}

// TestGCQuota: a write that takes the store over its quota starts a GC;
// what it can free (old, unpinned) goes.
func TestGCQuota(t *testing.T) {
	ctx := context.Background()
	g := newGCNode(t, func(c *Config) { c.MaxStorageBytes = 1 << 20; c.GCInterval = 0; c.GCSpacing = 0 })
	g.StartGC(nil)
	quotaRuns := func() float64 { return g.metric(t, "jobmesh_ipfs_gc_runs_total", "trigger", "quota", "result", "ok") }
	old, err := g.AddFile(ctx, bytes.NewReader(randomBytes(2<<20, 30)))
	if err != nil {
		t.Fatal(err)
	}
	// Over the quota, but everything is recent: a GC runs and frees
	// nothing, and says so.
	wait.Until(t, 10*time.Second, func() error {
		if quotaRuns() < 1 {
			return errors.New("no quota GC yet")
		}
		return nil
	})
	if !g.complete(t, old) || g.metric(t, "jobmesh_ipfs_gc_over_quota_total") < 1 {
		t.Fatal("the first quota GC freed recent blocks, or did not count staying over the quota")
	}
	g.clock.Advance(3 * g.cfg.GCGrace)
	runs := quotaRuns()
	if _, err := g.AddFile(ctx, bytes.NewReader(randomBytes(4<<10, 31))); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() error {
		if quotaRuns() <= runs || g.complete(t, old) {
			return errors.New("old content still there")
		}
		return nil
	})
	if s := g.StoredBytes(); s > 1<<20 {
		t.Fatalf("stored %d bytes after the quota GC", s)
	}
}

// TestGCKeepsRoots: the DAGs another block user names stay; when it
// cannot name them, the GC deletes nothing.
func TestGCKeepsRoots(t *testing.T) {
	ctx := context.Background()
	g := newGCNode(t, func(c *Config) { c.GCInterval = 0 })
	kept, err := g.AddDir(ctx, map[string][]byte{"x": randomBytes(300<<10, 40)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := g.AddFile(ctx, bytes.NewReader(randomBytes(300<<10, 41)))
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("heads unreadable")
	var broken atomic.Bool
	g.StartGC(func(context.Context) ([]cid.Cid, error) {
		if broken.Load() {
			return nil, fail
		}
		return []cid.Cid{kept}, nil
	})
	g.clock.Advance(3 * g.cfg.GCGrace)
	broken.Store(true)
	if _, err := g.GC(ctx); !errors.Is(err, fail) || !g.complete(t, other) {
		t.Fatalf("GC without its roots: %v; other complete %v", err, g.complete(t, other))
	}
	broken.Store(false)
	if _, err := g.GC(ctx); err != nil {
		t.Fatal(err)
	}
	if !g.complete(t, kept) || g.complete(t, other) {
		t.Fatal("roots not kept, or unrooted content kept")
	}
}

// TestPinFetchesTheDAG: Pin brings a DAG another node holds and keeps it.
func TestPinFetchesTheDAG(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := newGCNode(t, nil), newGCNode(t, nil)
	data := randomBytes(1<<20+5, 50)
	c, err := a.AddFile(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.h.Connect(ctx, peer.AddrInfo{ID: a.h.ID(), Addrs: a.h.Addrs()}); err != nil {
		t.Fatal(err)
	}
	if err := b.Pin(ctx, c, "output:x"); err != nil {
		t.Fatal(err)
	}
	if !b.complete(t, c) {
		t.Fatal("Pin returned before the DAG was local")
	}
	b.clock.Advance(3 * b.cfg.GCGrace)
	if _, err := b.GC(ctx); err != nil || !b.complete(t, c) {
		t.Fatalf("pinned DAG lost: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	other := newGCNode(t, nil) // connected to nobody
	if err := other.Pin(short, c, "output:x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pin of content nobody serves: %v", err)
	}
	if pins, _ := other.Pins(ctx); len(pins) != 0 {
		t.Fatalf("a failed pin was recorded: %+v", pins)
	}
}

// TestStageLeavesNothingOnError: content whose reading fails (a size
// limit, a client gone) leaves no block and no spool file; committed
// content is imported and pinned.
func TestStageLeavesNothingOnError(t *testing.T) {
	ctx := context.Background()
	g := newGCNode(t, nil)
	cut := errors.New("client gone")
	r := io.MultiReader(bytes.NewReader(randomBytes(5<<20, 60)), iotestErr{cut})
	if _, err := g.Stage(r); !errors.Is(err, cut) {
		t.Fatalf("Stage of a failing reader: %v", err)
	}
	if n := g.blockCount(t); n != 0 {
		t.Fatalf("%d blocks after a failed upload", n)
	}
	if ents, _ := os.ReadDir(g.staging); len(ents) != 0 {
		t.Fatalf("spool files left: %v", ents)
	}
	data := randomBytes(1<<20, 61)
	s, err := g.Stage(bytes.NewReader(data))
	if err != nil || s.Size() != int64(len(data)) {
		t.Fatalf("Stage: %v", err)
	}
	if err := s.Refuse(); err != nil || g.blockCount(t) != 0 {
		t.Fatalf("refused staged content: %v, %d blocks", err, g.blockCount(t))
	}
	s, err = g.Stage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Commit(ctx, "upload", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := g.IsPinned(ctx, c); !ok || !g.complete(t, c) {
		t.Fatal("committed upload not pinned whole")
	}
	if ents, _ := os.ReadDir(g.staging); len(ents) != 0 {
		t.Fatalf("spool files left after commit: %v", ents)
	}
	if got := g.metric(t, "jobmesh_ipfs_staged_discarded_total"); got != 2 {
		t.Fatalf("discarded uploads counted %v, want 2", got)
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

func TestStagingDirCleanedAtStart(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{stagePrefix + "123", "keep.txt"} {
		if err := os.WriteFile(dir+"/"+name, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	newGCNode(t, func(c *Config) { c.StagingDir = dir })
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "keep.txt" {
		t.Fatalf("staging dir after start: %v", ents)
	}
}

func TestConfigValidateGC(t *testing.T) {
	for i, mutate := range []func(*Config){
		func(c *Config) { c.MaxStorageBytes = -1 },
		func(c *Config) { c.GCGrace = 0 },
		func(c *Config) { c.GCInterval = -time.Second },
		func(c *Config) { c.PinRetention = -1 },
		func(c *Config) { c.StagingDir = "relative" },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func FuzzDecodePin(f *testing.F) {
	c := cid.MustParse("bafkqaaa")
	b, _ := encodePin(Pin{CID: c, Owner: "job:1", Created: time.Unix(5, 0), Expires: time.Unix(9, 0)})
	f.Add(pinPrefix+"/job:1/"+c.String(), b)
	f.Add("/pins/x/y", []byte(`{"v":1,"created":1}`))
	f.Add("/pins//", []byte(`{}`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		p, err := decodePin(key, b)
		if err != nil {
			return
		}
		if len(b) > maxPinRecord || validOwner(p.Owner) != nil || !p.CID.Defined() {
			t.Fatalf("accepted %q %q as %+v", key, b, p)
		}
		again, err := encodePin(p)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := decodePin(pinKey(p.Owner, p.CID).String(), again)
		if err != nil || !p2.CID.Equals(p.CID) || p2.Owner != p.Owner || !p2.Created.Equal(p.Created) || !p2.Expires.Equal(p.Expires) {
			t.Fatalf("round trip of %+v: %+v, %v", p, p2, err)
		}
	})
}
