package processor

import (
	"context"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// A job's output must outlive the processor that assembled it. Every node
// that holds the whole output DAG, pinned, says so with a holder record
// (records.Holder): the assembler when it has assembled it, and a second
// node before the verdict is written (handoff.go): the creator's node, or
// the runner-up finalizer when the creator's node is not connected.
// `jobnode job status` and GET /v1/jobs/{id} list the holders of the
// verdict's output (finish.Holders).

// pinForJob keeps c in the block layer until the node releases job id's
// pins. A failure is logged: the content stays for the GC's grace period
// anyway, and a lost result is redone.
func (w *Worker) pinForJob(ctx context.Context, id jobs.ID, c cid.Cid) {
	if w.p.Blocks == nil || !c.Defined() {
		return
	}
	if err := w.p.Blocks.Pin(ctx, c, records.JobPinOwner(id)); err != nil && ctx.Err() == nil {
		w.log.Warn("pinning job content", "job", id, "cid", c, "err", err)
	}
}

// holdOutput pins the output this processor assembled and says it holds
// it.
func (w *Worker) holdOutput(ctx context.Context, id jobs.ID, out cid.Cid) {
	if w.p.Blocks == nil {
		return
	}
	if err := w.p.Blocks.Pin(ctx, out, records.JobPinOwner(id)); err != nil {
		w.log.Warn("pinning the assembled output", "job", id, "output", out, "err", err)
		return
	}
	if err := records.WriteHolder(ctx, w.writer, w.p.Store.Self(), id, out); err != nil {
		w.log.Warn("writing the holder record", "job", id, "err", err)
	}
}
