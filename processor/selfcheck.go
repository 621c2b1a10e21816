package processor

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// requestChecks writes a check for every self-checked block that has
// none, and reports whether every check target (finish.CheckTargets: the
// self-checked blocks and the checks still convicting) is settled.
func (w *Worker) requestChecks(ctx context.Context, js *jobState, v microjob.Verdict, recs *finish.Records) (bool, error) {
	scs := finish.CheckTargets(js.plan, v, recs)
	pending := false
	var checks []crdt.Entry
	var sent []records.Check
	var procs []string
	for _, sc := range scs {
		if _, done := finish.CheckOutcome(recs, sc); done {
			continue
		}
		if procs == nil {
			var err error
			if procs, err = w.processors(ctx); err != nil {
				return false, err
			}
		}
		var pool []string
		for _, p := range procs {
			if p != sc.Processor {
				pool = append(pool, p)
			}
		}
		if len(pool) < 2 {
			// Too few processors for an independent majority: the block
			// stands as the verifier saw it (docs/ARCHITECTURE.md).
			w.log.Warn("too few processors to check a self-checked block", "job", js.plan.JobID, "block", sc.Block, "processor", sc.Processor)
			continue
		}
		pending = true
		c, requested := recs.Checks[sc.Block]
		requested = requested && c.Processor == sc.Processor
		var keep, dropped []string
		if requested {
			// Waiting for the re-runs; re-runners that do not answer in
			// time are replaced.
			var silent []string
			for _, third := range c.Thirds {
				if finish.HasRerun(recs, sc.Block, third) {
					keep = append(keep, third)
				} else {
					silent = append(silent, third)
				}
			}
			if len(silent) == 0 || !w.rerunOverdue(js, "check", sc.Block, c.Thirds[:]) {
				continue
			}
			dropped = append(slices.Clone(c.Dropped), silent...)
			w.log.Warn("re-runners of a self-checked block did not answer; drawing others", "job", js.plan.JobID, "block", sc.Block, "silent", silent)
		}
		pool = slices.DeleteFunc(pool, func(p string) bool { return slices.Contains(dropped, p) || slices.Contains(keep, p) })
		// Re-runners are weighted draws (as a dispute's third) from those
		// not drawn yet.
		seed := dispatch.Seed(js.plan.JobID[:], []byte("check"), uint64Bytes(sc.Block), uint64Bytes(uint64(len(dropped))))
		picks := slices.Clone(keep)
		for len(picks) < 2 {
			i, ok := w.pickThird(js, pool, dispatch.Seed(seed, uint64Bytes(uint64(len(picks)))))
			if !ok {
				break
			}
			picks = append(picks, pool[i])
			pool = slices.Delete(pool, i, i+1)
		}
		exhausted := len(picks) < 2
		if exhausted {
			if !requested || c.Exhausted {
				w.log.Warn("no processors left to re-run a self-checked block", "job", js.plan.JobID, "block", sc.Block)
				w.judgeAgain(js)
				continue
			}
			// Keep the silent one named; the answers that came decide.
			w.log.Warn("no processors left to replace a silent re-runner; the re-runs in hand decide", "job", js.plan.JobID, "block", sc.Block)
			picks = c.Thirds[:]
		}
		rec := records.Check{Block: sc.Block, Processor: sc.Processor, Hash: sc.Hash, Thirds: [2]string{picks[0], picks[1]}, Dropped: dropped, Exhausted: exhausted}
		e, err := crdt.JSONEntry(records.CheckKey(js.plan.JobID, sc.Block, w.self), records.CheckType, rec)
		if err != nil {
			return false, err
		}
		checks = append(checks, e)
		sent = append(sent, rec)
	}
	// Every request of this judgement goes out as one store batch.
	if len(checks) > 0 {
		if err := w.writer.PutBatch(ctx, checks); err != nil {
			return false, err
		}
		for _, rec := range sent {
			w.log.Info("self-checked block sent for two independent runs", "job", js.plan.JobID, "block", rec.Block, "processor", rec.Processor, "thirds", rec.Thirds)
		}
	}
	return !pending, nil
}

// rerunOverdue reports whether the re-run request (kind, block, thirds)
// has waited longer than Config.RerunTimeout since this node first saw it.
func (w *Worker) rerunOverdue(js *jobState, kind string, block uint64, thirds []string) bool {
	key := kind + "/" + strconv.FormatUint(block, 10) + "/" + strings.Join(thirds, ",")
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.rerunSeen == nil {
		js.rerunSeen = map[string]time.Time{}
	}
	seen, ok := js.rerunSeen[key]
	if !ok {
		js.rerunSeen[key] = now
		seen = now
	}
	if now.Sub(seen) < w.cfg.RerunTimeout {
		js.graceWait = true // judge again when it is overdue
		return false
	}
	return true
}
