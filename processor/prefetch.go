package processor

import (
	"context"
	"sync"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/microjob"
)

// prefetchParallel is how many result directories prefetchResults fetches
// at once.
const prefetchParallel = 16

// prefetchResults starts, once per job, fetching every accepted result
// directory of a verified verdict into this node's block store, while the
// finalizer waits for self-check re-runs: assembling the output then reads
// local blocks instead of making one network round trip per MicroJob. A
// culprit found by the checks only means some fetched blocks go unused.
// Failures are left to the assembly, which fetches what is missing.
func (w *Worker) prefetchResults(js *jobState, v microjob.Verdict) {
	if w.p.Blocks == nil {
		return
	}
	w.mu.Lock()
	if js.prefetching {
		w.mu.Unlock()
		return
	}
	js.prefetching = true
	w.mu.Unlock()
	var roots []cid.Cid
	for _, s := range v.ResultCIDs {
		if c, err := cid.Decode(s); err == nil {
			roots = append(roots, c)
		}
	}
	dag := w.p.Blocks.DAGService()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ctx, cancel := context.WithTimeout(w.runCtx, 2*time.Minute)
		defer cancel()
		sem := make(chan struct{}, prefetchParallel)
		var wg sync.WaitGroup
		for _, c := range roots {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := merkledag.FetchGraph(ctx, c, dag); err != nil && ctx.Err() == nil {
					w.log.Debug("prefetching a result", "job", js.plan.JobID, "result", c, "err", err)
				}
			}()
		}
		wg.Wait()
	}()
}
