package processor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Work asked of some processor outside the queues: the re-runs of
// disputed and self-checked blocks by the thirds drawn for them, and the
// redos of MicroJobs whose culprits or silent committers are excluded.
// A pass over a job's requests reads all its records, so it is made only
// when they changed or a Poll has gone by (requestPass).

// doReruns runs the disputed blocks assigned to this processor.
func (w *Worker) doReruns(ctx context.Context) bool {
	did := false
	for _, js := range w.openJobs() {
		if !w.index.MayRequest(js.plan().JobID) || !w.requestPass(js, rerunPass) {
			continue
		}
		recs, err := w.accepted(ctx, js)
		if err != nil {
			continue
		}
		// A re-runner dropped for silence still answers: a late answer
		// still votes (finish.Escalation).
		asked := map[uint64]bool{}
		for block, d := range recs.Dispute {
			asked[block] = asked[block] || slices.Contains(finish.DisputeRerunners(d), w.self) || slices.Contains(d.Dropped, w.self)
		}
		for block, c := range recs.Checks {
			asked[block] = asked[block] || slices.Contains(finish.CheckRerunners(c), w.self) || slices.Contains(c.Dropped, w.self)
		}
		var reruns []crdt.Entry
		for block, mine := range asked {
			if !mine || slices.ContainsFunc(recs.Reruns[block], func(r records.Rerun) bool { return r.Processor == w.self }) {
				continue
			}
			if !w.funded(ctx, js, w.now()) {
				break // a re-run is work on the job: for its members only
			}
			w.mu.Lock()
			over := js.finished
			w.mu.Unlock()
			if over {
				break // a verdict came meanwhile: nobody counts the rest
			}
			if err := w.ensureInputs(ctx, js); err != nil {
				w.fail(js, "fetching job inputs", err)
				continue
			}
			off, n, err := js.plan().BlockRange(block)
			if err != nil {
				continue
			}
			w.mu.Lock()
			code, data := js.code, js.data
			w.mu.Unlock()
			out, err := w.exec.Run(microjob.WithJobLimits(ctx, js.info), code, data[off:off+n])
			if err != nil {
				w.log.Warn("re-running a disputed block", "job", js.plan().JobID, "block", block, "err", err)
				continue
			}
			if w.cfg.Tamper != nil {
				out = w.cfg.Tamper(block, true, out)
			}
			sum := sha256.Sum256(out)
			rr := records.Rerun{Block: block, Hash: hex.EncodeToString(sum[:]), Processor: w.self}
			e, err := crdt.JSONEntry(records.RerunKey(js.plan().JobID, block, w.self), records.RerunType, rr)
			if err != nil {
				continue
			}
			reruns = append(reruns, e)
		}
		// A job's re-runs go out as one store batch.
		if len(reruns) == 0 {
			continue
		}
		if err := w.writer.PutBatch(ctx, reruns); err != nil {
			w.log.Warn("writing re-runs", "job", js.plan().JobID, "count", len(reruns), "err", err)
			continue
		}
		w.log.Info("re-ran disputed or self-checked blocks", "job", js.plan().JobID, "blocks", len(reruns))
		did = true
	}
	return did
}

// doRedos runs MicroJobs marked for redoing that this processor may take
// and has not run; the result is committed and disclosed at once (the
// MacroJob's other commitments are long in).
func (w *Worker) doRedos(ctx context.Context) bool {
	for _, js := range w.openJobs() {
		if !w.index.MayRequest(js.plan().JobID) || !w.requestPass(js, redoPass) {
			continue
		}
		recs, err := w.accepted(ctx, js)
		if err != nil || len(recs.Redo) == 0 {
			continue
		}
		for _, rd := range recs.Redo {
			if slices.Contains(rd.Exclude, w.self) || !w.groups.MayRedo(ctx, js.info, js.plan(), rd) || !w.redoTurn(js, rd) {
				continue
			}
			mid, err := jobs.ParseHash(rd.Micro)
			if err != nil {
				continue
			}
			if slices.ContainsFunc(recs.Discl, func(d microjob.Disclosure) bool {
				return d.MicroID == mid && !slices.Contains(rd.Exclude, d.Processor)
			}) {
				continue // someone already redid it
			}
			if slices.ContainsFunc(recs.Commits, func(c microjob.Commitment) bool {
				return c.MicroID == mid && c.Processor == w.self
			}) {
				// Committed here already (in its room, before the redo
				// was asked for): its disclosure is on its way. A second
				// run would commit again under another salt, and two
				// commitments of one MicroJob by one processor void both.
				continue
			}
			micro, err := js.plan().MicroJob(mid)
			if err != nil {
				continue
			}
			if !w.funded(ctx, js, w.now()) {
				break // a redo is work on the job: for its members only
			}
			if err := w.ensureInputs(ctx, js); err != nil {
				w.fail(js, "fetching job inputs", err)
				continue
			}
			d, c, err := w.run(ctx, js, micro)
			if err != nil {
				w.fail(js, "redoing MicroJob", err)
				continue
			}
			// The rest of the MacroJob is disclosed already: the
			// commitment and the disclosure go out together.
			if err := w.writer.PutBatch(ctx, []crdt.Entry{
				{Key: records.CommitmentKey(c), Type: records.CommitType, Payload: c.Encode()},
				{Key: records.DisclosureKey(d), Type: records.ResultType, Payload: d.Encode()},
			}); err != nil {
				continue
			}
			w.log.Info("redid MicroJob", "job", js.plan().JobID, "micro", mid)
			return true
		}
	}
	return false
}

// redoTurn reports whether it is this processor's turn to redo rd. The
// live processors that may take it and that this node is connected to
// are ranked by a hash of their peer ID with the job and the MicroJob
// (rendezvous hashing): the first redoes it at once, the k-th only once
// the redo has waited k MicroJob processing timeouts since this node
// first saw it (those before it may have stopped). A processor that
// stopped drops out of the ranking as soon as its connections close,
// rather than when its advertisement lapses; nodes that disagree on who
// is connected may both redo the MicroJob, which costs a run, never a
// wrong verdict. Without the ranking every processor redoes every redone
// MicroJob at once. A replicated job's redos are taken by any processor
// groupjob.Groups.MayRedo admits.
func (w *Worker) redoTurn(js *jobState, rd records.Redo) bool {
	if replicated(js) {
		return true
	}
	v := w.dview.Load()
	w.mu.Lock()
	if js.redoView != v {
		js.redoRanks, js.redoView = map[string]int{}, v
	}
	key := rd.Micro + "/" + strings.Join(rd.Exclude, ",")
	rank, ok := js.redoRanks[key]
	w.mu.Unlock()
	if !ok || rank > 0 {
		// A processor ranked before this one may have gone since.
		rank = w.redoRank(context.Background(), js, rd, v)
		w.mu.Lock()
		js.redoRanks[key] = rank
		w.mu.Unlock()
	}
	if rank == 0 {
		return true
	}
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.redoSeen == nil {
		js.redoSeen = map[string]time.Time{}
	}
	seen, ok := js.redoSeen[rd.Micro]
	if !ok {
		js.redoSeen[rd.Micro], seen = now, now
	}
	return now.Sub(seen) >= time.Duration(rank)*w.processingTimeout()
}

// redoRank is this processor's place in redoTurn's ranking for rd in
// dispatch view v (finish.RedoRank), among the processors it is
// connected to (all of them for a worker without a host). When some of
// them committed work in the job, only those rank: they are surely able
// to work on it (on a chain, members of its escrow), where a processor
// the job has not seen may be unable to join it (unstaked, slashed by
// an earlier job) and would hold every redo ranked after it for a
// processing timeout. A processor that committed nothing in the job
// then ranks after all of them.
func (w *Worker) redoRank(ctx context.Context, js *jobState, rd records.Redo, v *meshview.View) int {
	if v == nil {
		return 0
	}
	var active map[string]bool
	var committed []string // never redo it (doRedos)
	if w.index != nil {
		if p, err := w.progressOf(ctx, js); err == nil {
			active = p.Active()
			if mid, err := jobs.ParseHash(rd.Micro); err == nil {
				committed = p.CommittedBy(mid)
			}
		}
	}
	var procs, worked []dispatch.Node
	for _, p := range v.Processors {
		if w.canWork(p) {
			procs = append(procs, p.Node)
			if active[p.ID] && !slices.Contains(rd.Exclude, p.ID) && !slices.Contains(committed, p.ID) {
				worked = append(worked, p.Node)
			}
		}
	}
	if len(worked) > 0 {
		if !slices.ContainsFunc(worked, func(n dispatch.Node) bool { return n.ID == w.self }) {
			return len(procs) // after every processor of the job
		}
		procs = worked
	}
	return finish.RedoRank(w.self, js.plan().JobID, rd, js.info.Requirements, procs)
}

// The kinds of request pass (requestPass).
const (
	redoPass = iota
	rerunPass
)

// requestPass reports whether a pass over js's requests of kind k
// (redoPass, rerunPass) is due now (finish.PassDue), and notes the pass.
func (w *Worker) requestPass(js *jobState, k int) bool {
	now := w.now()
	w.mu.Lock()
	waiting := !js.catchUpUntil.IsZero() && now.Before(js.catchUpUntil)
	w.mu.Unlock()
	if waiting {
		// A job from this node's replica that waits out the catch-up:
		// its verdict may not have arrived yet, and a re-run or redo of
		// a finished job is work for nothing that holds up the worker.
		return false
	}
	ver := w.index.RequestsVersion(js.plan().JobID)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !finish.PassDue(ver, js.requestsVer[k], js.requestsAt[k], now, w.cfg.Poll) {
		return false
	}
	js.requestsVer[k], js.requestsAt[k] = ver, now
	return true
}
