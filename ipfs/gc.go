package ipfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/boxo/datastore/dshelp"
	"github.com/ipfs/boxo/ipld/merkledag"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	ipld "github.com/ipfs/go-ipld-format"
	mh "github.com/multiformats/go-multihash"
)

// Garbage collection is mark and sweep, as in kubo. The mark walks, in the
// local blockstore only, the DAG of every live pin and of every root the
// node's other DAG users name (RootsFunc: the replicated store's heads,
// whose history lives in the same blockstore). The sweep deletes every
// block that is neither marked nor written in the last Config.GCGrace:
// blocks being fetched or just produced, not yet pinned, stay. The GC
// holds gcMu for writing; Pin and staged imports hold it for reading, so
// a pin never lands between the mark and the sweep.
//
// Bytes stored are counted as blocks are written and deleted, and
// recounted by every sweep. Over Config.MaxStorageBytes a GC starts
// (at most one per Config.GCSpacing); so does one every Config.GCInterval.

// RootsFunc names the roots of DAGs that other users of the block layer
// keep in it, for the GC to keep whole.
type RootsFunc func(ctx context.Context) ([]cid.Cid, error)

// GCResult is what one GC did.
type GCResult struct {
	BlocksFreed int
	BytesFreed  int64
	// BlocksKept and BytesKept are what remains.
	BlocksKept int
	BytesKept  int64
	// PinsExpired are the expired pins removed.
	PinsExpired int
}

// ErrClosed is returned by GC on a closed Node.
var ErrClosed = errors.New("ipfs: closed")

// StartGC starts the periodic and quota-triggered GC, with roots naming
// the DAGs of the node's other block users (nil: pins only). It runs
// until Close. A node that shares its blockstore with another DAG (the
// replicated store) must start the GC only once that DAG's roots can be
// named: before StartGC no GC runs on its own.
func (n *Node) StartGC(roots RootsFunc) {
	n.gcStart.Do(func() {
		n.rootsMu.Lock()
		n.roots = roots
		n.rootsMu.Unlock()
		n.gcWG.Add(1)
		go n.gcLoop()
	})
}

func (n *Node) gcLoop() {
	defer n.gcWG.Done()
	if err := n.countStored(n.runCtx); err != nil && n.runCtx.Err() == nil {
		n.log.Warn("counting stored bytes", "err", err)
	}
	var tick <-chan time.Time
	if n.cfg.GCInterval > 0 {
		t := time.NewTicker(n.cfg.GCInterval)
		defer t.Stop()
		tick = t.C
	}
	var last time.Time
	for {
		trigger := "interval"
		select {
		case <-n.runCtx.Done():
			return
		case <-tick:
		case <-n.gcTrigger:
			trigger = "quota"
			if wait := n.cfg.GCSpacing - n.now().Sub(last); !last.IsZero() && wait > 0 {
				continue // the next write over the quota asks again
			}
		}
		last = n.now()
		if _, err := n.gc(n.runCtx, trigger); err != nil && n.runCtx.Err() == nil {
			n.log.Warn("garbage collection", "trigger", trigger, "err", err)
		}
	}
}

// GC removes every block that no live pin, root or recent write keeps,
// and every expired pin.
func (n *Node) GC(ctx context.Context) (GCResult, error) { return n.gc(ctx, "manual") }

func (n *Node) gc(ctx context.Context, trigger string) (GCResult, error) {
	n.gcMu.Lock()
	defer n.gcMu.Unlock()
	if n.runCtx.Err() != nil {
		return GCResult{}, ErrClosed
	}
	start := n.now()
	var res GCResult
	marked, expired, err := n.mark(ctx, start)
	if err != nil {
		n.metrics.gcRuns.WithLabelValues(trigger, "error").Inc()
		return res, err
	}
	for _, p := range expired {
		if err := n.pins.Delete(ctx, pinKey(p.Owner, p.CID)); err != nil {
			return res, fmt.Errorf("ipfs: gc: removing an expired pin: %w", err)
		}
		n.pinCount.Add(-1)
		res.PinsExpired++
	}
	if err := n.sweep(ctx, marked, &res); err != nil {
		n.metrics.gcRuns.WithLabelValues(trigger, "error").Inc()
		return res, err
	}
	n.metrics.gcRuns.WithLabelValues(trigger, "ok").Inc()
	n.metrics.gcBlocksFreed.Add(float64(res.BlocksFreed))
	n.metrics.gcBytesFreed.Add(float64(res.BytesFreed))
	lvl := n.log.Debug
	if res.BlocksFreed > 0 {
		lvl = n.log.Info
	}
	lvl("garbage collected", "trigger", trigger, "blocks_freed", res.BlocksFreed, "bytes_freed", res.BytesFreed,
		"blocks_kept", res.BlocksKept, "bytes_kept", res.BytesKept, "pins_expired", res.PinsExpired, "took", n.now().Sub(start))
	if max := n.cfg.MaxStorageBytes; max > 0 && res.BytesKept > max {
		n.metrics.overQuota.Inc()
		n.log.Warn("the block store stays over its quota: pins and recent blocks keep more than max_storage_bytes",
			"stored", res.BytesKept, "max_storage_bytes", max)
	}
	return res, nil
}

// mark returns the multihashes of every block reachable from a live pin
// or a root, and the expired pins.
func (n *Node) mark(ctx context.Context, now time.Time) (map[string]struct{}, []Pin, error) {
	pins, err := n.Pins(ctx)
	if err != nil {
		return nil, nil, err
	}
	var roots []cid.Cid
	var expired []Pin
	for _, p := range pins {
		if p.live(now) {
			roots = append(roots, p.CID)
		} else {
			expired = append(expired, p)
		}
	}
	n.pinCount.Store(int64(len(pins)))
	n.rootsMu.Lock()
	rf := n.roots
	n.rootsMu.Unlock()
	if rf != nil {
		more, err := rf(ctx)
		if err != nil {
			// Without the other DAGs' roots the sweep would delete them.
			return nil, nil, fmt.Errorf("ipfs: gc: naming roots: %w", err)
		}
		roots = append(roots, more...)
	}
	marked := map[string]struct{}{}
	for _, r := range roots {
		if _, err := n.walkLocal(ctx, r, marked); err != nil {
			return nil, nil, fmt.Errorf("ipfs: gc: marking %s: %w", r, err)
		}
	}
	return marked, expired, nil
}

// sweep deletes the blocks that are neither marked nor recent, and
// recounts the bytes stored.
func (n *Node) sweep(ctx context.Context, marked map[string]struct{}, res *GCResult) error {
	q, err := n.listBlocks(ctx)
	if err != nil {
		return fmt.Errorf("ipfs: gc: listing blocks: %w", err)
	}
	defer q.Close()
	for r, ok := q.NextSync(); ok && ctx.Err() == nil; r, ok = q.NextSync() {
		if r.Error != nil {
			return fmt.Errorf("ipfs: gc: listing blocks: %w", r.Error)
		}
		h, ok := blockKeyHash(r.Key)
		if !ok {
			continue // a pin
		}
		if _, ok := marked[string(h)]; ok || n.recent.has(string(h), n.now()) {
			res.BlocksKept++
			res.BytesKept += int64(r.Size)
			continue
		}
		if err := n.bstore.DeleteBlock(ctx, cid.NewCidV1(cid.Raw, h)); err != nil && !ipld.IsNotFound(err) {
			return fmt.Errorf("ipfs: gc: deleting a block: %w", err)
		}
		res.BlocksFreed++
		res.BytesFreed += int64(r.Size)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	n.stored.Store(res.BytesKept)
	n.storedKnown.Store(true)
	return nil
}

// countStored sets the bytes stored from a scan of the blockstore.
func (n *Node) countStored(ctx context.Context) error {
	q, err := n.listBlocks(ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	var total int64
	for r, ok := q.NextSync(); ok && ctx.Err() == nil; r, ok = q.NextSync() {
		if r.Error != nil {
			return r.Error
		}
		if _, ok := blockKeyHash(r.Key); ok {
			total += int64(r.Size)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	n.stored.Store(total)
	n.storedKnown.Store(true)
	n.checkQuota()
	return nil
}

// listBlocks lists the keys and sizes of the datastore the blockstore
// lives in, blocks and pins. The whole datastore is listed, not the
// blockstore's prefix: the node hands the block layer a datastore already
// under a /blocks namespace, and a prefix query for /blocks through it
// would look under /blocks/blocks (go-datastore's prefix transform leaves
// a key that already starts with its prefix as it is, so the blockstore's
// blocks lie directly under /blocks). blockKeyHash tells the blocks.
func (n *Node) listBlocks(ctx context.Context) (query.Results, error) {
	return n.blockDS.Query(ctx, query.Query{Prefix: "/", KeysOnly: true, ReturnsSizes: true})
}

// blockKeyHash returns the multihash of a block's datastore key, as
// listBlocks returns it: /<mh> or /blocks/<mh>.
func blockKeyHash(key string) (mh.Multihash, bool) {
	k := ds.RawKey(key)
	if p := k.Parent().String(); p != "/" && p != blockstore.BlockPrefix.String() {
		return nil, false
	}
	h, err := dshelp.DsKeyToMultihash(ds.NewKey(k.BaseNamespace()))
	return h, err == nil
}

// StoredBytes is the bytes of blocks the node stores, as last counted.
func (n *Node) StoredBytes() int64 { return n.stored.Load() }

// checkQuota asks for a GC when the store is over its quota.
func (n *Node) checkQuota() {
	if max := n.cfg.MaxStorageBytes; max > 0 && n.storedKnown.Load() && n.stored.Load() > max {
		select {
		case n.gcTrigger <- struct{}{}:
		default:
		}
	}
}

// walkLocal adds to seen the multihash of every local block of the DAG
// under root (dag-pb and raw; other codecs count as leaves). Missing
// blocks are skipped; complete reports whether there were none.
func (n *Node) walkLocal(ctx context.Context, root cid.Cid, seen map[string]struct{}) (complete bool, err error) {
	complete = true
	stack := []cid.Cid{root}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		k := string(c.Hash())
		if _, ok := seen[k]; ok {
			continue
		}
		if c.Prefix().MhType == 0x00 { // identity: the data is in the CID
			continue
		}
		b, err := n.bstore.Get(ctx, c)
		if ipld.IsNotFound(err) {
			complete = false
			continue
		}
		if err != nil {
			return false, err
		}
		seen[k] = struct{}{}
		if c.Type() != cid.DagProtobuf {
			continue
		}
		nd, err := merkledag.DecodeProtobufBlock(b)
		if err != nil {
			continue // a block that is not dag-pb links nowhere
		}
		for _, l := range nd.Links() {
			stack = append(stack, l.Cid)
		}
	}
	return complete, nil
}

// localComplete reports whether every block of the DAG under c is local.
func (n *Node) localComplete(ctx context.Context, c cid.Cid) (bool, error) {
	return n.walkLocal(ctx, c, map[string]struct{}{})
}

// recentSet remembers when each block was last written, for the grace
// period; entries older than that are dropped once per period, so memory
// is bounded by the writes of two periods.
type recentSet struct {
	grace time.Duration

	mu      sync.Mutex
	written map[string]time.Time
	pruned  time.Time
}

func newRecentSet(grace time.Duration, now time.Time) *recentSet {
	return &recentSet{grace: grace, written: map[string]time.Time{}, pruned: now}
}

func (r *recentSet) add(bs []blocks.Block, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.pruned) >= r.grace {
		for h, t := range r.written {
			if now.Sub(t) >= r.grace {
				delete(r.written, h)
			}
		}
		r.pruned = now
	}
	for _, b := range bs {
		r.written[string(b.Cid().Hash())] = now
	}
}

// has reports whether the block was written less than grace before now.
func (r *recentSet) has(h string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.written[h]
	return ok && now.Sub(t) < r.grace
}

// accountingBlockstore notes every block written as recent (before it is
// written, so that a sweep running meanwhile keeps it), and counts the
// bytes of new blocks and of deleted ones.
type accountingBlockstore struct {
	blockstore.Blockstore
	n *Node
}

func (a *accountingBlockstore) Put(ctx context.Context, b blocks.Block) error {
	return a.PutMany(ctx, []blocks.Block{b})
}

func (a *accountingBlockstore) PutMany(ctx context.Context, bs []blocks.Block) error {
	a.n.recent.add(bs, a.n.now())
	var added int64
	for _, b := range bs {
		// Has then Put may count a block twice when two writers race;
		// the next sweep recounts.
		if has, err := a.Blockstore.Has(ctx, b.Cid()); err == nil && !has {
			added += int64(len(b.RawData()))
		}
	}
	if err := a.Blockstore.PutMany(ctx, bs); err != nil {
		return err
	}
	if added > 0 {
		a.n.stored.Add(added)
		a.n.checkQuota()
	}
	return nil
}

func (a *accountingBlockstore) DeleteBlock(ctx context.Context, c cid.Cid) error {
	size, err := a.Blockstore.GetSize(ctx, c)
	if err != nil {
		return err
	}
	if err := a.Blockstore.DeleteBlock(ctx, c); err != nil {
		return err
	}
	a.n.stored.Add(-int64(size))
	return nil
}
