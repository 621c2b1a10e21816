package ipfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/p2p"
)

type testNode struct {
	h *p2p.Host
	*Node
}

func newTestNode(t *testing.T, dhtMode ...string) testNode {
	t.Helper()
	cfg := p2p.LoopbackConfig()
	if len(dhtMode) > 0 {
		cfg.DHTMode = dhtMode[0]
	}
	cfg.TopicDiscovery = false
	key, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	h, err := p2p.New(context.Background(), p2p.Params{Config: cfg, Identity: key})
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(context.Background(), Params{
		Config: DefaultConfig(), Host: h, Routing: h.DHT,
		Datastore: dssync.MutexWrap(ds.NewMapDatastore()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(); h.Close() })
	return testNode{h: h, Node: n}
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// dhtClients starts a bootstrap node and two DHT clients connected to it
// only, so the only route between a and b is a provider record on the
// bootstrap node.
func dhtClients(t *testing.T, ctx context.Context) (a, b testNode) {
	t.Helper()
	boot := newTestNode(t)
	a, b = newTestNode(t, p2p.DHTModeClient), newTestNode(t, p2p.DHTModeClient)
	for _, n := range []testNode{a, b} {
		if err := n.h.Connect(ctx, peer.AddrInfo{ID: boot.h.ID(), Addrs: boot.h.Addrs()}); err != nil {
			t.Fatal(err)
		}
	}
	// The DHT adds a connected server to its routing table only after
	// identify: until then a provide finds no peer in the table.
	wait.Until(t, 30*time.Second, func() error {
		for _, n := range []testNode{a, b} {
			if n.h.DHT.RoutingTable().Find(boot.h.ID()) == "" {
				return fmt.Errorf("%s: the bootstrap server is not in the DHT routing table yet", n.h.ID())
			}
		}
		return nil
	})
	return a, b
}

func TestFetchThroughDHT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := dhtClients(t, ctx)
	data := randomBytes(3<<20+17, 1)
	c, err := a.AddFile(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Provide(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := b.h.Network().Connectedness(a.h.ID()); got.String() == "Connected" {
		t.Fatal("a and b should start unconnected")
	}
	r, err := b.Cat(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("fetched %d bytes, not identical to the %d added", len(got), len(data))
	}
	// Every block b holds came over bitswap from a, the file's data and
	// the DAG's nodes over it.
	blocksIn, bytesIn := testutil.ToFloat64(b.metrics.blocksReceived), testutil.ToFloat64(b.metrics.bytesReceived)
	blocksOut, bytesOut := testutil.ToFloat64(a.metrics.blocksSent), testutil.ToFloat64(a.metrics.bytesSent)
	if minBlocks := float64(int64(len(data)) / DefaultConfig().ChunkSize); blocksIn < minBlocks || blocksOut < minBlocks {
		t.Errorf("b received %v blocks, a sent %v; the file has at least %v", blocksIn, blocksOut, minBlocks)
	}
	if bytesIn < float64(len(data)) || bytesOut < float64(len(data)) {
		t.Errorf("b received %v bytes of blocks, a sent %v; the file has %d", bytesIn, bytesOut, len(data))
	}
}

func TestAddDirAndGet(t *testing.T) {
	ctx := context.Background()
	n := newTestNode(t)
	entries := map[string][]byte{"a.txt": []byte("alpha"), "b.bin": randomBytes(600<<10, 2)}
	c1, err := n.AddDir(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := n.AddDir(ctx, entries)
	if err != nil || !c1.Equals(c2) {
		t.Fatalf("same entries gave %s and %s (%v)", c1, c2, err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := n.Get(ctx, c1, out); err != nil {
		t.Fatal(err)
	}
	for name, want := range entries {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, err %v", name, len(got), err)
		}
	}
	// AddPath of the written tree gives the same CID.
	c3, err := n.AddPath(ctx, out)
	if err != nil || !c3.Equals(c1) {
		t.Fatalf("AddPath gave %s, want %s (%v)", c3, c1, err)
	}
	if _, err := n.AddDir(ctx, map[string][]byte{"../x": nil}); err == nil {
		t.Fatal("accepted a path as an entry name")
	}
}

func TestBlockstoreRejectsMismatchedBlock(t *testing.T) {
	ctx := context.Background()
	n := newTestNode(t)
	sum, _ := mh.Sum([]byte("real"), mh.SHA2_256, -1)
	c := cid.NewCidV1(cid.Raw, sum)
	forged, _ := blocks.NewBlockWithCid([]byte("forged"), c)
	if err := n.Blockstore().Put(ctx, forged); !errors.Is(err, ErrBlockMismatch) {
		t.Fatalf("got %v, want ErrBlockMismatch", err)
	}
	if has, _ := n.Has(ctx, c); has {
		t.Fatal("forged block stored")
	}
	good, _ := blocks.NewBlockWithCid([]byte("real"), c)
	if err := n.Blockstore().Put(ctx, good); err != nil {
		t.Fatal(err)
	}
}

func TestCatUnknownCIDTimesOut(t *testing.T) {
	n := newTestNode(t)
	sum, _ := mh.Sum([]byte("nobody has this"), mh.SHA2_256, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := n.Cat(ctx, cid.NewCidV1(cid.Raw, sum)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want ErrNotFound", err)
	}
}

// TestLocalDAGMovesASmallDirectory: a small directory's blocks, read from
// the local store, put into another node's store make the directory
// readable there without the network; a directory over the limit, or one
// with a block missing, gives none.
func TestLocalDAGMovesASmallDirectory(t *testing.T) {
	ctx := context.Background()
	a, b := newTestNode(t), newTestNode(t)
	entries := map[string][]byte{"0": []byte("zero"), "1": []byte("one")}
	c, err := a.AddDir(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	bs, ok, err := a.LocalDAG(ctx, c, 4<<10)
	if err != nil || !ok || len(bs) != 3 || !bs[0].Cid().Equals(c) {
		t.Fatalf("LocalDAG: %d blocks, ok %v, err %v", len(bs), ok, err)
	}
	if _, ok, err := a.LocalDAG(ctx, c, 8); ok || err != nil {
		t.Fatalf("over the limit: ok %v, err %v", ok, err)
	}
	if _, ok, err := b.LocalDAG(ctx, c, 4<<10); ok || err != nil {
		t.Fatalf("nothing local: ok %v, err %v", ok, err)
	}
	if err := b.PutBlocks(ctx, bs); err != nil {
		t.Fatal(err)
	}
	// b is connected to nobody: the read is local.
	nd, err := b.DAGService().Get(ctx, c)
	if err != nil || len(nd.Links()) != 2 {
		t.Fatalf("directory on b: %v", err)
	}
	got, ok, err := b.LocalDAG(ctx, c, 4<<10)
	if err != nil || !ok || len(got) != len(bs) {
		t.Fatalf("LocalDAG on b: %d blocks, ok %v, err %v", len(got), ok, err)
	}
	sum, _ := mh.Sum([]byte("real"), mh.SHA2_256, -1)
	forged, _ := blocks.NewBlockWithCid([]byte("forged"), cid.NewCidV1(cid.Raw, sum))
	if err := b.PutBlocks(ctx, []blocks.Block{forged}); err == nil {
		t.Fatal("a forged block was stored")
	}
	if has, _ := b.Has(ctx, forged.Cid()); has {
		t.Fatal("forged block stored")
	}
}
