package crdt

import (
	"context"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// LocalBlocks tells whether a block is in this node's own block store,
// without asking the network.
type LocalBlocks interface {
	Has(ctx context.Context, c cid.Cid) (bool, error)
}

// awaitDAG is the DAG service go-ds-crdt walks. Each delta names the
// writer's previous heads as children, and under load those are mostly
// other replicas' deltas whose broadcasts, carrying their blocks, are a
// moment behind the one being walked. A walk that asks bitswap for such a
// block sends a want to every connected peer, and each of them looks the
// block up and answers, only for the broadcast to bring it anyway. So a
// block that is not local is first waited for, up to wait, and fetched
// from the network only if no broadcast brought it by then.
//
// A replica that catches up (it was offline, or missed updates) walks
// deltas no broadcast will bring again, one DAG level after another;
// waiting at every level would make catching up take a wait per level.
// So when a wait runs out and no waited-for block has come with a
// broadcast for quietWaits waits, waiting stops for pauseWaits waits.
type awaitDAG struct {
	ipld.DAGService
	local LocalBlocks
	wait  time.Duration
	// awaited counts waited-for blocks by how they came: "broadcast"
	// (within the wait) or "network" (fetched after it).
	awaited func(outcome string)

	mu      sync.Mutex
	waiters map[cid.Cid]*blockWaiter
	// lastArrival is when a waited-for block last came with a broadcast;
	// no walk waits before pausedUntil.
	lastArrival, pausedUntil time.Time
}

// How long no waited-for block may come with a broadcast before a wait
// that runs out pauses waiting, and for how long, in waits: a pause
// costs a catching-up walk one wait per pauseWaits waits of fetching.
const (
	quietWaits = 5
	pauseWaits = 30
)

// blockWaiter is closed when a broadcast stores its block; n counts the
// walks waiting on it, so that the last one to give up removes it.
type blockWaiter struct {
	arrived chan struct{}
	n       int
}

func newAwaitDAG(dag ipld.DAGService, local LocalBlocks, wait time.Duration, awaited func(string)) *awaitDAG {
	return &awaitDAG{DAGService: dag, local: local, wait: wait, awaited: awaited, waiters: map[cid.Cid]*blockWaiter{}}
}

// stored tells the walks waiting for c that a broadcast stored its block.
func (d *awaitDAG) stored(c cid.Cid) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w, ok := d.waiters[c]; ok {
		close(w.arrived)
		delete(d.waiters, c)
	}
}

// Get implements ipld.NodeGetter.
func (d *awaitDAG) Get(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	d.await(ctx, []cid.Cid{c})
	return d.DAGService.Get(ctx, c)
}

// GetMany implements ipld.NodeGetter.
func (d *awaitDAG) GetMany(ctx context.Context, cs []cid.Cid) <-chan *ipld.NodeOption {
	d.await(ctx, cs)
	return d.DAGService.GetMany(ctx, cs)
}

// await returns when every block of cs is local, or after d.wait, or when
// ctx ends. Waiters are registered before the local check, so a block
// stored in between is not missed.
func (d *awaitDAG) await(ctx context.Context, cs []cid.Cid) {
	if d.wait <= 0 || d.local == nil || len(cs) == 0 {
		return
	}
	ws := make(map[cid.Cid]*blockWaiter, len(cs))
	d.mu.Lock()
	if time.Now().Before(d.pausedUntil) {
		d.mu.Unlock()
		return
	}
	for _, c := range cs {
		if _, dup := ws[c]; dup {
			continue
		}
		w, ok := d.waiters[c]
		if !ok {
			w = &blockWaiter{arrived: make(chan struct{})}
			d.waiters[c] = w
		}
		w.n++
		ws[c] = w
	}
	d.mu.Unlock()
	var missing []cid.Cid
	for c := range ws {
		if has, err := d.local.Has(ctx, c); err != nil || !has {
			missing = append(missing, c)
			continue
		}
		d.release(c, ws[c])
		delete(ws, c)
	}
	if len(missing) == 0 {
		return
	}
	t := time.NewTimer(d.wait)
	defer t.Stop()
	for i, c := range missing {
		select {
		case <-ws[c].arrived:
			d.outcome("broadcast")
			continue
		case <-t.C:
		case <-ctx.Done():
		}
		// Out of time: the rest go to the network, unless they came
		// meanwhile.
		for _, c := range missing[i:] {
			w := ws[c]
			select {
			case <-w.arrived:
				d.outcome("broadcast")
			default:
				d.outcome("network")
				d.release(c, w)
			}
		}
		return
	}
}

// outcome counts how a waited-for block came, and pauses waiting when
// waits run out while broadcasts bring nothing waited for.
func (d *awaitDAG) outcome(o string) {
	d.awaited(o)
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case o == "broadcast":
		d.lastArrival = now
	case now.Sub(d.lastArrival) >= quietWaits*d.wait:
		d.pausedUntil = now.Add(pauseWaits * d.wait)
	}
}

// release drops one walk's interest in c's waiter.
func (d *awaitDAG) release(c cid.Cid, w *blockWaiter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.n--; w.n == 0 && d.waiters[c] == w {
		delete(d.waiters, c)
	}
}
