package processor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
)

// A job's output must outlive the processor that assembled it. Every node
// that holds the whole output DAG, pinned, says so with a holder record
// /jobs/<id>/holders/<peer ID>, written by that peer only (AuthorPolicy):
// the assembler when it has assembled it, the creator's node when it has
// fetched it after the verdict. `jobnode job status` and GET /v1/jobs/{id}
// list them.

// HolderType records hold a Holder under HolderKey.
const HolderType = "holder"

// HolderKey is where holder says it holds job id's output.
func HolderKey(id jobs.ID, holder peer.ID) string {
	return holdersPrefix(id) + holder.String()
}

func holdersPrefix(id jobs.ID) string { return JobKey(id) + "/holders/" }

// Holder is the payload of a holder record: the output it holds.
type Holder struct {
	Output string `json:"output"` // CID of the assembled output
}

// JobPinOwner is the block layer's pin owner of what a node keeps for job
// id while the job runs: its MicroJob results, the assembled output and
// the verdict body on a processor, the job's inputs on its creator's
// node. The node releases these pins when the job is settled (or over).
func JobPinOwner(id jobs.ID) string { return "job:" + id.String() }

// OutputPinOwner is the pin owner of the creator's copy of job id's
// output, kept until someone unpins it.
func OutputPinOwner(id jobs.ID) string { return "output:" + id.String() }

// pinForJob keeps c in the block layer until the node releases job id's
// pins. A failure is logged: the content stays for the GC's grace period
// anyway, and a lost result is redone.
func (w *Worker) pinForJob(ctx context.Context, id jobs.ID, c cid.Cid) {
	if w.p.Blocks == nil || !c.Defined() {
		return
	}
	if err := w.p.Blocks.Pin(ctx, c, JobPinOwner(id)); err != nil && ctx.Err() == nil {
		w.log.Warn("pinning job content", "job", id, "cid", c, "err", err)
	}
}

// holdOutput pins the output this processor assembled and says it holds
// it.
func (w *Worker) holdOutput(ctx context.Context, id jobs.ID, out cid.Cid) {
	if w.p.Blocks == nil {
		return
	}
	if err := w.p.Blocks.Pin(ctx, out, JobPinOwner(id)); err != nil {
		w.log.Warn("pinning the assembled output", "job", id, "output", out, "err", err)
		return
	}
	if err := WriteHolder(ctx, w.writer, w.p.Store.Self(), id, out); err != nil {
		w.log.Warn("writing the holder record", "job", id, "err", err)
	}
}

// WriteHolder writes self's holder record of job id's output.
func WriteHolder(ctx context.Context, store crdt.Writer, self peer.ID, id jobs.ID, out cid.Cid) error {
	return crdt.PutJSON(ctx, store, HolderKey(id, self), HolderType, Holder{Output: out.String()})
}

// Holders returns the peers whose holder record says they hold job id's
// output, sorted. A record whose author is not the peer its key names,
// or that does not decode, is skipped.
func Holders(ctx context.Context, store crdt.Reader, id jobs.ID) ([]peer.ID, error) {
	recs, err := store.Query(ctx, strings.TrimSuffix(holdersPrefix(id), "/"))
	if err != nil {
		return nil, fmt.Errorf("processor: holders of job %s: %w", id, err)
	}
	out := []peer.ID{}
	for _, r := range recs {
		if p, ok := holderOf(id, r); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// holderOf checks one holder record and returns its peer.
func holderOf(id jobs.ID, r crdt.Record) (peer.ID, bool) {
	name, ok := strings.CutPrefix(r.Key, holdersPrefix(id))
	if !ok || r.Type != HolderType || name != r.Author.String() {
		return "", false
	}
	var h Holder
	if decodeStrict(r.Payload, &h) != nil {
		return "", false
	}
	if _, err := cid.Decode(h.Output); err != nil {
		return "", false
	}
	return r.Author, true
}

// holderPolicy: a holder record is written by the peer it names.
func holderPolicy(key string, author peer.ID) error {
	rest, ok := strings.CutPrefix(key, "/jobs/")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, "/holders/"); i >= 0 && rest[i+len("/holders/"):] != author.String() {
		return fmt.Errorf("holder record %q written by %s", key, author)
	}
	return nil
}
