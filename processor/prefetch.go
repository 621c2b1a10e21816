package processor

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
	"github.com/jobmesh/jobmesh/microjob"
)

// prefetchResults starts, once per job, bringing every accepted result
// directory of a verified verdict into this node's block store: while the
// finalizer waits for self-check re-runs, and before it assembles the
// output, which then reads local blocks instead of making one network
// round trip per MicroJob. Small results come inline in their disclosures
// (microjob.Disclosure.Inline) and are stored from there; the rest are
// fetched. A culprit found by the checks only means some blocks go
// unused. Failures are left to the assembly, which fetches what is
// missing. The returned channel is closed when the prefetch is over.
func (w *Worker) prefetchResults(js *jobState, v microjob.Verdict, recs *finish.Records) <-chan struct{} {
	w.mu.Lock()
	if js.prefetched != nil {
		done := js.prefetched
		w.mu.Unlock()
		return done
	}
	done := make(chan struct{})
	js.prefetched = done
	w.mu.Unlock()
	if w.p.Blocks == nil {
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
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(done)
		start := time.Now()
		ctx, cancel := context.WithTimeout(w.runCtx, prefetchTimeout)
		defer cancel()
		if err := w.p.Blocks.PutBlocks(ctx, inline); err != nil {
			w.log.Warn("storing inline results", "job", js.plan.JobID, "err", err)
		}
		if len(roots) > 0 {
			w.reachHolders(ctx, js, v)
		}
		sem := make(chan struct{}, prefetchParallel)
		var wg sync.WaitGroup
		dag := w.p.Blocks.DAGService()
		for _, c := range roots {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := merkledag.FetchGraph(ctx, c, dag); err != nil && ctx.Err() == nil {
					w.log.Debug("prefetching a result", "job", js.plan.JobID, "result", c, "err", err)
				}
			})
		}
		wg.Wait()
		w.log.Debug("results prefetched", "job", js.plan.JobID, "inline_blocks", len(inline), "fetched", len(roots), "took", time.Since(start))
	}()
	return done
}

// prefetchParallel is how many result directories prefetchResults
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
func (w *Worker) reachHolders(ctx context.Context, js *jobState, v microjob.Verdict) {
	if w.p.Host == nil {
		return
	}
	w.mu.Lock()
	if js.reached {
		w.mu.Unlock()
		return
	}
	js.reached = true
	w.mu.Unlock()
	seen := map[peer.ID]bool{}
	var ids []peer.ID
	for _, r := range v.Results {
		if id, err := peer.Decode(r.Processor); err == nil && !seen[id] && !slices.Contains(v.Culprits, r.Processor) {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sem := make(chan struct{}, reachHoldersParallel)
	var wg sync.WaitGroup
	for _, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rctx, cancel := context.WithTimeout(ctx, reachTimeout)
			defer cancel()
			if err := w.p.Host.Reach(rctx, id); err != nil && ctx.Err() == nil {
				w.log.Debug("reaching a result holder", "job", js.plan.JobID, "peer", id, "err", err)
			}
		})
	}
	wg.Wait()
}
