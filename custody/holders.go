package custody

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A job's output must outlive the processor that assembled it. Every node
// that holds the whole output DAG, pinned, says so with a holder record
// (records.Holder): the assembler when it has assembled it, and a second
// node before the verdict is written (handoff.go): the creator's node, or
// the runner-up finalizer when the creator's node is not connected.
// `jobnode job status` and GET /v1/jobs/{id} list the holders of the
// verdict's output (finish.Holders).

// Pin keeps c in the block layer until the node releases job id's pins.
// A failure is logged: the content stays for the GC's grace period
// anyway, and a lost result is redone.
func (k *Keeper) Pin(ctx context.Context, id jobs.ID, c cid.Cid) {
	if k.p.Blocks == nil || !c.Defined() {
		return
	}
	if err := k.p.Blocks.Pin(ctx, c, records.JobPinOwner(id)); err != nil && ctx.Err() == nil {
		k.log.Warn("pinning job content", "job", id, "cid", c, "err", err)
	}
}

// holdOutput pins the output this node assembled and says it holds it.
func (k *Keeper) holdOutput(ctx context.Context, id jobs.ID, out cid.Cid) {
	if k.p.Blocks == nil {
		return
	}
	if err := k.p.Blocks.Pin(ctx, out, records.JobPinOwner(id)); err != nil {
		k.log.Warn("pinning the assembled output", "job", id, "output", out, "err", err)
		return
	}
	if err := records.WriteHolder(ctx, k.p.Writer, k.self, id, out); err != nil {
		k.log.Warn("writing the holder record", "job", id, "err", err)
	}
}

// Assemble returns this node's assembly of the output of verdict v of
// the job (info, plan), from the results prefetched (Prefetch) and, for
// what the prefetch did not bring within prefetchWait, fetched result by
// result; once per verdict. The node then holds the output, pinned, and
// has written its holder record.
func (k *Keeper) Assemble(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, v microjob.Verdict, recs *finish.Records) (cid.Cid, error) {
	id := plan.JobID
	key := sha256.Sum256(v.Encode())
	k.mu.Lock()
	out, ok := k.job(id).outputs[key]
	k.mu.Unlock()
	if ok {
		return out, nil
	}
	pw := time.NewTimer(prefetchWait)
	select {
	case <-k.Prefetch(id, v, recs):
	case <-pw.C:
	case <-ctx.Done():
	}
	pw.Stop()
	var store microjob.OutputStore
	if k.p.Blocks != nil {
		store = k.p.Blocks
	}
	out, err := microjob.Assemble(ctx, info, plan, v, store)
	if err != nil {
		return cid.Undef, err
	}
	// Every node that assembles the output (the finalizer, each signer)
	// keeps it and says so, so that it outlives any one of them.
	k.holdOutput(ctx, id, out)
	k.held(id, key, k.p.Now())
	k.mu.Lock()
	j := k.job(id)
	if j.outputs == nil {
		j.outputs = map[[32]byte]cid.Cid{}
	}
	j.outputs[key] = out
	k.mu.Unlock()
	return out, nil
}
