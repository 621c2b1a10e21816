package processor

import (
	"context"
	"errors"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/records"
)

// A job of one replica is sliced without its verifiers (jobs.Slice): they
// are drawn once the job's check seed is known, after every regular
// MicroJob is committed (finish.ChooseChecks). Until then nothing this
// node knows tells which blocks will be checked, and no MacroJob is
// disclosed (finish.Progress.MacroFull).

// drawChecks gives js its verifiers once its check seed is known: the
// DApp's reveal, or the lapse seed RevealTimeout after this node saw the
// regular MicroJobs committed. It counts each refused reveal record once.
func (w *Worker) drawChecks(ctx context.Context, js *jobState) {
	w.mu.Lock()
	plan, drawn := js.plan(), js.checks != finish.CheckPending
	w.mu.Unlock()
	if drawn {
		return
	}
	id := plan.JobID
	p, err := w.progressOf(ctx, js)
	if err != nil {
		return
	}
	now := w.now()
	complete := p.RegularsCommitted(plan)
	w.mu.Lock()
	if complete && js.regularsAt.IsZero() {
		js.regularsAt = now
	}
	since := now.Sub(js.regularsAt)
	w.mu.Unlock()
	if !complete && w.index.Reveals(id) == 0 {
		return
	}
	recs, err := w.records(ctx, id)
	if err != nil {
		return
	}
	c := finish.ChooseChecks(js.info, plan, recs, p, since, w.cfg.RevealTimeout)
	w.countRefusedReveals(js, c)
	if c.Source == finish.CheckPending {
		return
	}
	checked, err := finish.CheckedPlan(plan, c)
	if err != nil {
		w.log.Warn("drawing a job's checks", "job", id, "err", err)
		return
	}
	w.mu.Lock()
	js.withPlan(checked)
	js.checks, js.checksAt = c.Source, now
	js.owners, js.ownersView = nil, nil // the verifier ranks hash the check seed: derive them again
	w.stopWaitsLocked()
	w.mu.Unlock()
	w.poke()
	if c.Source == finish.CheckLapsed {
		w.log.Warn("the job's DApp did not reveal its check seed in time: checks drawn from the lapse seed", "job", id, "waited", since)
		return
	}
	w.log.Info("checks drawn", "job", id, "source", c.Source)
}

// countRefusedReveals counts, once each, the reveal records c refused.
func (w *Worker) countRefusedReveals(js *jobState, c finish.Checks) {
	for key, err := range c.Refused {
		reason := "malformed"
		switch {
		case errors.Is(err, records.ErrRevealMismatch):
			reason = "mismatch"
		case errors.Is(err, records.ErrRevealAuthor):
			reason = "author"
		case errors.Is(err, finish.ErrEarlyReveal):
			reason = "early"
		}
		w.mu.Lock()
		seen := js.revealsSeen[key+" "+reason]
		if !seen {
			if js.revealsSeen == nil {
				js.revealsSeen = map[string]bool{}
			}
			js.revealsSeen[key+" "+reason] = true
		}
		w.mu.Unlock()
		if !seen {
			w.m.refused.WithLabelValues("reveal", reason).Inc()
			w.log.Warn("reveal record refused", "job", js.info.ID(), "key", key, "reason", reason, "err", err)
		}
	}
}
