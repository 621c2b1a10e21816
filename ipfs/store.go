package ipfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/boxo/bitswap"
	bsclient "github.com/ipfs/boxo/bitswap/client"
	"github.com/ipfs/boxo/bitswap/network/bsnet"
	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/blockstore"
	chunk "github.com/ipfs/boxo/chunker"
	"github.com/ipfs/boxo/files"
	"github.com/ipfs/boxo/ipld/merkledag"
	unixfile "github.com/ipfs/boxo/ipld/unixfs/file"
	"github.com/ipfs/boxo/ipld/unixfs/importer/balanced"
	"github.com/ipfs/boxo/ipld/unixfs/importer/helpers"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/boxo/routing/providerquerymanager"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/routing"
	mh "github.com/multiformats/go-multihash"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/internal/dsguard"
)

// Store is the block layer as the rest of jobmesh sees it. Keeping callers
// on this interface, not on boxo's types, keeps the implementation
// replaceable.
type Store interface {
	// AddFile imports r as a UnixFS file and returns its root CID.
	AddFile(ctx context.Context, r io.Reader) (cid.Cid, error)
	// AddDir imports a directory of named files (name → content).
	AddDir(ctx context.Context, entries map[string][]byte) (cid.Cid, error)
	// AddPath imports a file or a directory tree from disk.
	AddPath(ctx context.Context, path string) (cid.Cid, error)
	// Cat reads a UnixFS file, fetching missing blocks from the network.
	Cat(ctx context.Context, c cid.Cid) (io.ReadCloser, error)
	// Get writes a UnixFS file or directory to path.
	Get(ctx context.Context, c cid.Cid, path string) error
	// Fetch makes the whole DAG under c local.
	Fetch(ctx context.Context, c cid.Cid) error
	// Provide announces on the routing system that this node has c.
	Provide(ctx context.Context, c cid.Cid) error
	// Has reports whether the root block of c is stored locally.
	Has(ctx context.Context, c cid.Cid) (bool, error)
	// DAGService is the IPLD view of the same blocks, fetched on demand.
	DAGService() ipld.DAGService
}

// ErrNotFound is returned when a CID cannot be resolved before the context
// ends.
var ErrNotFound = errors.New("ipfs: not found")

// ErrInvalidConfig is wrapped by Config validation errors.
var ErrInvalidConfig = errors.New("ipfs: invalid config")

// Config configures a Node.
type Config struct {
	// ChunkSize is the UnixFS chunk size in bytes. Default: 256 KiB.
	ChunkSize int64
	// ProviderSearchDelay is how long bitswap asks connected peers before
	// it looks for providers on the DHT. Default: 200ms.
	ProviderSearchDelay time.Duration
	// ProvideFetched announces content this node fetched in full (Get,
	// Fetch), so that it can serve it on. Default: true.
	ProvideFetched bool
	// MaxStorageBytes is the block store's quota: more bytes of blocks
	// than this start a GC (gc.go). Pinned and recent blocks are kept even
	// over it. 0: no quota. Default 10 GiB.
	MaxStorageBytes int64
	// GCInterval is how often the GC runs on its own, once StartGC was
	// called. 0: only when the quota is exceeded. Default 1h.
	GCInterval time.Duration
	// GCGrace protects new blocks: a block written less than this long
	// ago is never collected, so that content being fetched, produced or
	// imported, not yet pinned, stays. Default 15m.
	GCGrace time.Duration
	// GCSpacing is the least time between two GCs the quota starts.
	// Default 1m.
	GCSpacing time.Duration
	// PinRetention is how long a released pin (Release) still keeps its
	// DAG, and how long an upload stays pinned. Default 24h.
	PinRetention time.Duration
	// StagingDir is where AddStaged spools content before it imports it.
	// It belongs to this node: files left there by a crash are removed at
	// start. Default "": a new temporary directory, removed at Close.
	StagingDir string
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{ChunkSize: 256 << 10, ProviderSearchDelay: 200 * time.Millisecond, ProvideFetched: true,
		MaxStorageBytes: 10 << 30, GCInterval: time.Hour, GCGrace: 15 * time.Minute, GCSpacing: time.Minute,
		PinRetention: 24 * time.Hour}
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.ChunkSize < 1<<10 || c.ChunkSize > 1<<20 {
		return fmt.Errorf("%w: chunk size %d outside 1 KiB..1 MiB", ErrInvalidConfig, c.ChunkSize)
	}
	if c.ProviderSearchDelay <= 0 {
		return fmt.Errorf("%w: provider search delay must be positive", ErrInvalidConfig)
	}
	switch {
	case c.MaxStorageBytes < 0:
		return fmt.Errorf("%w: max storage bytes %d is negative", ErrInvalidConfig, c.MaxStorageBytes)
	case c.GCInterval < 0:
		return fmt.Errorf("%w: GC interval %v is negative", ErrInvalidConfig, c.GCInterval)
	case c.GCGrace < time.Second:
		return fmt.Errorf("%w: GC grace %v is under 1s: blocks being fetched would be collected", ErrInvalidConfig, c.GCGrace)
	case c.GCSpacing < 0:
		return fmt.Errorf("%w: GC spacing %v is negative", ErrInvalidConfig, c.GCSpacing)
	case c.PinRetention < 0:
		return fmt.Errorf("%w: pin retention %v is negative", ErrInvalidConfig, c.PinRetention)
	case c.StagingDir != "" && !filepath.IsAbs(c.StagingDir):
		return fmt.Errorf("%w: staging dir %q must be absolute", ErrInvalidConfig, c.StagingDir)
	}
	return nil
}

// Params are what New needs.
type Params struct {
	Config Config
	// Host runs bitswap. Required.
	Host host.Host
	// Routing finds and announces providers (the DHT). Required.
	Routing routing.Routing
	// Datastore persists the blocks. Required; Node does not close it.
	Datastore ds.Batching
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the block layer's metrics; nil keeps them local.
	Registerer prometheus.Registerer
	// Now is the clock of pins and of the GC's grace period. Default
	// time.Now.
	Now func() time.Time

	// bitswapOptions are appended to New's bitswap options; the package's
	// benchmarks use them to compare bitswap tunings.
	bitswapOptions []bitswap.Option
}

// bitswapMaxProviders is how many providers one DHT search looks for,
// bitswap's own default.
const bitswapMaxProviders = 10

// Node is the boxo implementation of Store: a persistent blockstore that
// verifies every block against its CID, bitswap on the node's host, and a
// DAG service over both.
type Node struct {
	cfg     Config
	log     *slog.Logger
	routing routing.Routing
	bstore  blockstore.Blockstore
	bswap   *bitswap.Bitswap
	bserv   blockservice.BlockService
	dag     ipld.DAGService
	prefix  cid.Prefix
	metrics *metrics
	cancel  context.CancelFunc
	guard   *dsguard.Datastore
	pqm     *providerquerymanager.ProviderQueryManager
	now     func() time.Time
	runCtx  context.Context

	// The pin set and the GC (pins.go, gc.go). blockDS is the datastore
	// under the blockstore, pins the one pins are kept in (the same).
	blockDS     ds.Batching
	pins        ds.Datastore
	gcMu        sync.RWMutex
	recent      *recentSet
	stored      atomic.Int64
	storedKnown atomic.Bool
	pinCount    atomic.Int64
	gcTrigger   chan struct{}
	gcStart     sync.Once
	gcWG        sync.WaitGroup
	rootsMu     sync.Mutex
	roots       RootsFunc
	staging     string
	ownStaging  bool // staging is a temporary directory New made

	closeOnce sync.Once
	closeErr  error
}

var _ Store = (*Node)(nil)

// New starts bitswap on p.Host. Close stops it; the host, routing and
// datastore belong to the caller.
func New(ctx context.Context, p Params) (*Node, error) {
	if err := p.Config.Validate(); err != nil {
		return nil, err
	}
	if p.Host == nil || p.Routing == nil || p.Datastore == nil {
		return nil, fmt.Errorf("%w: host, routing and datastore are required", ErrInvalidConfig)
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	staging, own, err := openStaging(p.Config.StagingDir)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: p.Config, now: now, recent: newRecentSet(p.Config.GCGrace, now()), gcTrigger: make(chan struct{}, 1),
		staging: staging, ownStaging: own}
	m := newMetrics(p.Registerer, n)
	guard := dsguard.New(p.Datastore)
	n.blockDS, n.pins = guard, guard
	verifying := &verifyingBlockstore{Blockstore: blockstore.NewBlockstore(guard), rejected: m.blocksRejected}
	bstore := &accountingBlockstore{Blockstore: verifying, n: n}
	// Bitswap lives until Close, not until the caller's ctx ends.
	runCtx, cancel := context.WithCancel(context.Background())
	net := bsnet.NewFromIpfsHost(p.Host)
	// The node's own provider query manager, with bitswap's limits, so
	// that sessions of unprovided content skip it (unprovided.go).
	pqm, err := providerquerymanager.New(net, p.Routing, providerquerymanager.WithMaxProviders(bitswapMaxProviders))
	if err != nil {
		cancel()
		if own {
			os.RemoveAll(staging)
		}
		return nil, fmt.Errorf("ipfs: provider query manager: %w", err)
	}
	opts := append([]bitswap.Option{
		bitswap.ProviderSearchDelay(p.Config.ProviderSearchDelay),
		bitswap.WithTracer(bitswapTracer{m}),
		bitswap.WithClientOption(bsclient.WithDefaultProviderQueryManager(false)),
	}, p.bitswapOptions...)
	bswap := bitswap.New(runCtx, net, searchFilter{pqm}, bstore, opts...)
	// Write-through: every add reaches the blockstore's Put, which marks
	// the block recent even when it was already stored (the blockstore
	// itself skips the rewrite), so that re-added content is safe from
	// the GC until it is pinned.
	bserv := blockservice.New(bstore, bswap, blockservice.WriteThrough(true))
	n.log = log.With("subsystem", "ipfs")
	n.routing, n.bstore, n.bswap, n.bserv = p.Routing, bstore, bswap, bserv
	n.dag = merkledag.NewDAGService(bserv)
	n.prefix = cid.Prefix{Version: 1, Codec: cid.DagProtobuf, MhType: mh.SHA2_256, MhLength: -1}
	n.metrics, n.cancel, n.guard, n.pqm, n.runCtx = m, cancel, guard, pqm, runCtx
	return n, nil
}

// DAGService implements Store.
func (n *Node) DAGService() ipld.DAGService { return n.dag }

// Config returns the node's configuration.
func (n *Node) Config() Config { return n.cfg }

// Blockstore exposes the local blockstore (no network).
func (n *Node) Blockstore() blockstore.Blockstore { return n.bstore }

// AddFile implements Store.
func (n *Node) AddFile(ctx context.Context, r io.Reader) (cid.Cid, error) {
	buf := ipld.NewBufferedDAG(ctx, n.dag)
	params := helpers.DagBuilderParams{
		Dagserv:    buf,
		RawLeaves:  true,
		Maxlinks:   helpers.DefaultLinksPerBlock,
		CidBuilder: n.prefix,
	}
	db, err := params.New(chunk.NewSizeSplitter(r, n.cfg.ChunkSize))
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add: %w", err)
	}
	nd, err := balanced.Layout(db)
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add: %w", err)
	}
	if err := buf.Commit(); err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add: %w", err)
	}
	n.metrics.added.Inc()
	return nd.Cid(), nil
}

// AddDir implements Store. Entries are added in name order, so the same
// entries always give the same CID.
func (n *Node) AddDir(ctx context.Context, entries map[string][]byte) (cid.Cid, error) {
	dir, err := uio.NewDirectory(n.dag)
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add dir: %w", err)
	}
	dir.SetCidBuilder(n.prefix)
	for _, name := range sortedKeys(entries) {
		if name == "" || filepath.Base(name) != name {
			return cid.Undef, fmt.Errorf("ipfs: add dir: invalid entry name %q", name)
		}
		c, err := n.AddFile(ctx, bytesReader(entries[name]))
		if err != nil {
			return cid.Undef, err
		}
		child, err := n.dag.Get(ctx, c)
		if err != nil {
			return cid.Undef, fmt.Errorf("ipfs: add dir: %w", err)
		}
		if err := dir.AddChild(ctx, name, child); err != nil {
			return cid.Undef, fmt.Errorf("ipfs: add dir: %w", err)
		}
	}
	return n.finishDir(ctx, dir)
}

func (n *Node) finishDir(ctx context.Context, dir uio.Directory) (cid.Cid, error) {
	nd, err := dir.GetNode()
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add dir: %w", err)
	}
	if err := n.dag.Add(ctx, nd); err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add dir: %w", err)
	}
	return nd.Cid(), nil
}

// AddPath implements Store.
func (n *Node) AddPath(ctx context.Context, path string) (cid.Cid, error) {
	st, err := os.Stat(path)
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add %s: %w", path, err)
	}
	if !st.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return cid.Undef, fmt.Errorf("ipfs: add %s: %w", path, err)
		}
		defer f.Close()
		return n.AddFile(ctx, f)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add %s: %w", path, err)
	}
	dir, err := uio.NewDirectory(n.dag)
	if err != nil {
		return cid.Undef, fmt.Errorf("ipfs: add %s: %w", path, err)
	}
	dir.SetCidBuilder(n.prefix)
	for _, e := range ents { // os.ReadDir sorts by name
		if !e.IsDir() && !e.Type().IsRegular() {
			continue // links and devices are not content
		}
		c, err := n.AddPath(ctx, filepath.Join(path, e.Name()))
		if err != nil {
			return cid.Undef, err
		}
		child, err := n.dag.Get(ctx, c)
		if err != nil {
			return cid.Undef, fmt.Errorf("ipfs: add %s: %w", path, err)
		}
		if err := dir.AddChild(ctx, e.Name(), child); err != nil {
			return cid.Undef, fmt.Errorf("ipfs: add %s: %w", path, err)
		}
	}
	return n.finishDir(ctx, dir)
}

// Cat implements Store.
func (n *Node) Cat(ctx context.Context, c cid.Cid) (io.ReadCloser, error) {
	nd, err := n.getNode(ctx, c)
	if err != nil {
		return nil, err
	}
	r, err := uio.NewDagReader(ctx, nd, merkledag.NewSession(ctx, n.dag))
	if err != nil {
		return nil, fmt.Errorf("ipfs: cat %s: %w", c, err)
	}
	return r, nil
}

// Get implements Store. It first fetches the whole DAG, then announces
// that this node has it too, so content spreads beyond its first provider:
// a node that cannot reach the original provider can fetch from any node
// that fetched before it.
func (n *Node) Get(ctx context.Context, c cid.Cid, path string) error {
	if err := n.Fetch(ctx, c); err != nil {
		return err
	}
	nd, err := n.getNode(ctx, c)
	if err != nil {
		return err
	}
	f, err := unixfile.NewUnixfsFile(ctx, n.dag, nd)
	if err != nil {
		return fmt.Errorf("ipfs: get %s: %w", c, err)
	}
	defer f.Close()
	if err := files.WriteTo(f, path); err != nil {
		return fmt.Errorf("ipfs: get %s: %w", c, err)
	}
	return nil
}

// Fetch makes every block of the DAG under c local, then provides c.
func (n *Node) Fetch(ctx context.Context, c cid.Cid) error {
	if err := merkledag.FetchGraph(ctx, c, n.dag); err != nil {
		if ctx.Err() != nil || ipld.IsNotFound(err) {
			return fmt.Errorf("%w: %s: %w", ErrNotFound, c, err)
		}
		return fmt.Errorf("ipfs: fetch %s: %w", c, err)
	}
	if n.cfg.ProvideFetched {
		if err := n.Provide(ctx, c); err != nil {
			n.log.Warn("provide fetched content", "cid", c, "err", err)
		}
	}
	return nil
}

func (n *Node) getNode(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	nd, err := n.dag.Get(ctx, c)
	if err != nil {
		if ctx.Err() != nil || ipld.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s: %w", ErrNotFound, c, err)
		}
		return nil, fmt.Errorf("ipfs: get %s: %w", c, err)
	}
	return nd, nil
}

// Provide implements Store.
func (n *Node) Provide(ctx context.Context, c cid.Cid) error {
	if err := n.routing.Provide(ctx, c, true); err != nil {
		return fmt.Errorf("ipfs: provide %s: %w", c, err)
	}
	n.metrics.provided.Inc()
	return nil
}

// Has implements Store.
func (n *Node) Has(ctx context.Context, c cid.Cid) (bool, error) {
	return n.bstore.Has(ctx, c)
}

// LocalDAG returns the blocks of the DAG under root, breadth first, read
// from the local block store only, if every one of them is local and they
// hold at most limit bytes together; ok is false otherwise. Only dag-pb
// and raw blocks are walked.
func (n *Node) LocalDAG(ctx context.Context, root cid.Cid, limit int) (bs []blocks.Block, ok bool, err error) {
	size := 0
	seen := map[cid.Cid]bool{root: true}
	for queue := []cid.Cid{root}; len(queue) > 0; queue = queue[1:] {
		c := queue[0]
		b, err := n.bstore.Get(ctx, c)
		if ipld.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("ipfs: local dag %s: %w", root, err)
		}
		if size += len(b.RawData()); size > limit {
			return nil, false, nil
		}
		bs = append(bs, b)
		switch c.Type() {
		case cid.Raw:
		case cid.DagProtobuf:
			nd, err := merkledag.DecodeProtobufBlock(b)
			if err != nil {
				return nil, false, fmt.Errorf("ipfs: local dag %s: %w", root, err)
			}
			for _, l := range nd.Links() {
				if !seen[l.Cid] {
					seen[l.Cid] = true
					queue = append(queue, l.Cid)
				}
			}
		default:
			return nil, false, nil
		}
	}
	return bs, true, nil
}

// PutBlocks stores blocks, each checked against its CID, and hands them to
// bitswap, so that a pending fetch of any of them ends at once.
func (n *Node) PutBlocks(ctx context.Context, bs []blocks.Block) error {
	if err := n.bserv.AddBlocks(ctx, bs); err != nil {
		return fmt.Errorf("ipfs: put blocks: %w", err)
	}
	return nil
}

// Close stops bitswap. It leaves the host, routing and datastore open.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.closeErr = n.bswap.Close()
		n.pqm.Close()
		n.cancel()
		n.gcWG.Wait()
		if n.ownStaging {
			n.closeErr = errors.Join(n.closeErr, os.RemoveAll(n.staging))
		}
		// Bitswap's own goroutines may still read blocks; from here on
		// they get ErrClosed instead of the owner's closed datastore.
		n.guard.Shut()
	})
	return n.closeErr
}

// ErrBlockMismatch is returned when a block's bytes do not hash to its CID.
var ErrBlockMismatch = errors.New("ipfs: block does not match its CID")

// verifyingBlockstore refuses any block whose data does not hash to its CID,
// so a lying peer can never plant content under someone else's CID.
type verifyingBlockstore struct {
	blockstore.Blockstore
	rejected prometheus.Counter
}

func (v *verifyingBlockstore) check(b blocks.Block) error {
	got, err := b.Cid().Prefix().Sum(b.RawData())
	if err != nil {
		v.rejected.Inc()
		return fmt.Errorf("%w: %s: %w", ErrBlockMismatch, b.Cid(), err)
	}
	if !got.Equals(b.Cid()) {
		v.rejected.Inc()
		return fmt.Errorf("%w: %s hashes to %s", ErrBlockMismatch, b.Cid(), got)
	}
	return nil
}

func (v *verifyingBlockstore) Put(ctx context.Context, b blocks.Block) error {
	if err := v.check(b); err != nil {
		return err
	}
	return v.Blockstore.Put(ctx, b)
}

func (v *verifyingBlockstore) PutMany(ctx context.Context, bs []blocks.Block) error {
	for _, b := range bs {
		if err := v.check(b); err != nil {
			return err
		}
	}
	return v.Blockstore.PutMany(ctx, bs)
}
