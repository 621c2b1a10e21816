package processor

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// requestChecks writes the next check of every check target
// (finish.CheckTargets: the self-checked blocks and the checks still
// convicting) that is not settled (finish.Escalation.NextCheck: a first
// round, another while the vote has no decisive margin, replacements for
// re-runners silent for RerunTimeout), and reports whether every target
// is settled.
func (w *Worker) requestChecks(ctx context.Context, js *jobState, v microjob.Verdict, recs *finish.Records) (bool, error) {
	id, esc := js.plan().JobID, finish.EscalationFor(js.plan())
	pending := false
	var checks []crdt.Entry
	var sent []records.Check
	for _, sc := range finish.CheckTargets(js.plan(), v, recs) {
		r := esc.CheckRuling(recs, sc)
		if r.Outcome == finish.VoteWon {
			continue
		}
		if len(finish.RerunOrder(id, records.CheckType, sc.Block, recs.Candidates, []string{sc.Processor})) < 2 {
			// Too few processors for an independent vote: the block
			// stands as the verifier saw it (finish.ChecksSettled).
			w.log.Warn("too few processors to check a self-checked block", "job", id, "block", sc.Block, "processor", sc.Processor)
			continue
		}
		pending = true
		if r.Outcome == finish.VoteUndecided {
			w.sayUndecidedCheck(js, sc, r)
			continue
		}
		var prev *records.Check
		var silent []string
		if c, ok := recs.Checks[sc.Block]; ok && c.Processor == sc.Processor {
			prev = &c
			if r.Outcome == finish.VotePending {
				for _, q := range finish.CheckRerunners(c) {
					if !finish.HasRerun(recs, sc.Block, q) && !slices.Contains(c.Dropped, q) {
						silent = append(silent, q)
					}
				}
				if !w.rerunOverdue(js, "check", sc.Block, finish.CheckRerunners(c)) {
					continue
				}
				w.log.Warn("re-runners of a self-checked block did not answer; drawing others", "job", id, "block", sc.Block, "silent", silent)
			}
		}
		rec, ok := esc.NextCheck(id, sc, prev, r, silent, recs.Candidates, w.unable)
		if !ok {
			w.log.Warn("no re-runner left to draw for a self-checked block", "job", id, "block", sc.Block, "votes", r.Tally)
			w.judgeAgain(js)
			continue
		}
		e, err := crdt.JSONEntry(records.CheckKey(id, sc.Block, w.self), records.CheckType, rec)
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
			w.ask(ctx, id, finish.CheckRerunners(rec))
			w.log.Info("self-checked block sent for re-runs", "job", id, "block", rec.Block, "processor", rec.Processor,
				"rerunners", finish.CheckRerunners(rec), "dropped", rec.Dropped, "exhausted", rec.Exhausted)
		}
	}
	return !pending, nil
}

// sayUndecidedCheck logs, once per block, a self-checked block that no
// vote decided: the job cannot be verified, and nobody is culprit for it.
func (w *Worker) sayUndecidedCheck(js *jobState, sc finish.SelfCheck, r finish.Ruling) {
	if w.firstSaid(js, "undecided-check/"+strconv.FormatUint(sc.Block, 10)+"/"+sc.Processor) {
		w.log.Warn("self-checked block undecided: the job cannot be verified", "job", js.plan().JobID, "block", sc.Block,
			"processor", sc.Processor, "reason", r.Reason)
	}
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
