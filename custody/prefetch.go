package custody

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// Prefetch starts, once per job, bringing every accepted result
// directory of a verified verdict into this node's block store: while the
// finalizer waits for self-check re-runs, and before it assembles the
// output, which then reads local blocks instead of making one network
// round trip per MicroJob. Small results come inline in their disclosures
// (microjob.Disclosure.Inline) and are stored from there; the rest are
// fetched. A culprit found by the checks only means some blocks go
// unused. Failures are left to the assembly, which fetches what is
// missing. The returned channel is closed when the prefetch is over.
func (k *Keeper) Prefetch(id jobs.ID, v microjob.Verdict, recs *finish.Records) <-chan struct{} {
	k.mu.Lock()
	j := k.job(id)
	if j.prefetched != nil {
		done := j.prefetched
		k.mu.Unlock()
		return done
	}
	done := make(chan struct{})
	j.prefetched = done
	k.mu.Unlock()
	if k.p.Blocks == nil {
		close(done)
		return done
	}
	var inline []blocks.Block
	local := map[cid.Cid]bool{}
	for _, d := range recs.Discl {
		if len(d.Inline) > 0 && !slices.Contains(v.Culprits, d.Processor) {
			inline = append(inline, d.Inline...)
			local[d.ResultCID] = true
		}
	}
	var roots []cid.Cid
	for _, s := range v.ResultCIDs {
		if c, err := cid.Decode(s); err == nil && !local[c] {
			roots = append(roots, c)
		}
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer close(done)
		start := time.Now()
		ctx, cancel := context.WithTimeout(k.ctx, prefetchTimeout)
		defer cancel()
		if err := k.p.Blocks.PutBlocks(ctx, inline); err != nil {
			k.log.Warn("storing inline results", "job", id, "err", err)
		}
		if len(roots) > 0 {
			k.reachHolders(ctx, id, v)
		}
		sem := make(chan struct{}, prefetchParallel)
		var wg sync.WaitGroup
		dag := k.p.Blocks.DAGService()
		for _, c := range roots {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := merkledag.FetchGraph(ctx, c, dag); err != nil && ctx.Err() == nil {
					k.log.Debug("prefetching a result", "job", id, "result", c, "err", err)
				}
			})
		}
		wg.Wait()
		k.log.Debug("results prefetched", "job", id, "inline_blocks", len(inline), "fetched", len(roots), "took", time.Since(start))
	}()
	return done
}

// prefetchParallel is how many result directories Prefetch
// fetches at once; prefetchTimeout bounds prefetching one job's results;
// prefetchWait is how long the assembly waits for the prefetch.
const (
	prefetchParallel = 16
	prefetchTimeout  = 2 * time.Minute
	prefetchWait     = 30 * time.Second
)

// reachHoldersParallel is how many result holders reachHolders dials at
// once; reachTimeout bounds one dial.
const (
	reachHoldersParallel = 8
	reachTimeout         = 10 * time.Second
)

// reachHolders connects this node, once per job, to every processor whose
// results a verified verdict accepts. Bitswap asks connected peers first
// and searches the DHT for providers only after a delay: a finalizer
// connected to the holders reads each result in one round trip instead
// of one provider search. A holder that cannot be reached is left to
// that search.
func (k *Keeper) reachHolders(ctx context.Context, id jobs.ID, v microjob.Verdict) {
	if k.p.Network == nil {
		return
	}
	k.mu.Lock()
	j := k.job(id)
	if j.reached {
		k.mu.Unlock()
		return
	}
	j.reached = true
	k.mu.Unlock()
	seen := map[peer.ID]bool{}
	var ids []peer.ID
	for _, r := range v.Results {
		if p, err := peer.Decode(r.Processor); err == nil && !seen[p] && !slices.Contains(v.Culprits, r.Processor) {
			seen[p] = true
			ids = append(ids, p)
		}
	}
	sem := make(chan struct{}, reachHoldersParallel)
	var wg sync.WaitGroup
	for _, p := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, reachTimeout)
			defer cancel()
			if err := k.p.Network.Reach(rctx, p); err != nil && ctx.Err() == nil {
				k.log.Debug("reaching a result holder", "job", id, "peer", p, "err", err)
			}
		})
	}
	wg.Wait()
}
