package processor

import (
	"context"
	"errors"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// A job of one replica is sliced without its verifiers (jobs.Slice): they
// are drawn once the job's check seed is known, after every regular
// MicroJob is committed (finish.ChooseChecks). Until then nothing this
// node knows tells which blocks will be checked, and no MacroJob is
// disclosed (finish.Progress.MacroFull).

// drawChecks gives js its verifiers once its check seed is known: the
// DApp's reveal, or the lapse seed RevealTimeout after this node saw the
// regular MicroJobs committed. A valid reveal wins over the lapse
// (finish.ChooseChecks), for whoever judges the job as for this node: a
// job drawn from the lapse seed is drawn again from a reveal that comes
// later, since verifiers of the lapse seed would never count. It counts
// each refused reveal record once.
func (w *Worker) drawChecks(ctx context.Context, js *jobState) {
	w.mu.Lock()
	plan, source, tried := js.plan(), js.checks, js.revealsTried
	w.mu.Unlock()
	id := plan.JobID
	switch source {
	case finish.CheckPending:
	case finish.CheckLapsed:
		n := w.index.Reveals(id)
		if n <= tried {
			return
		}
		w.mu.Lock()
		js.revealsTried = n
		w.mu.Unlock()
		base, err := jobs.Slice(js.info)
		if err != nil {
			return
		}
		plan = base
	default:
		return
	}
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
	if c.Source == finish.CheckPending || source == finish.CheckLapsed && c.Source != finish.CheckRevealed {
		return
	}
	checked, err := finish.CheckedPlan(plan, c)
	if err != nil {
		w.log.Warn("drawing a job's checks", "job", id, "err", err)
		return
	}
	w.mu.Lock()
	if js.checks != source {
		w.mu.Unlock()
		return // drawn meanwhile by the other loop
	}
	js.withPlan(checked)
	js.checks, js.checksAt = c.Source, now
	js.owners, js.ownersView = nil, nil // the verifier ranks hash the check seed: derive them again
	w.stopWaitsLocked()
	w.mu.Unlock()
	w.poke()
	if source == finish.CheckLapsed {
		w.m.checks.WithLabelValues("redrawn").Inc()
	} else {
		w.m.checks.WithLabelValues(c.Source.String()).Inc()
	}
	if c.Source == finish.CheckLapsed {
		w.log.Warn("the job's DApp did not reveal its check seed in time: checks drawn from the lapse seed", "job", id, "waited", since)
		return
	}
	if source == finish.CheckLapsed {
		w.log.Warn("the job's DApp revealed its check seed after the lapse: checks drawn again from the reveal", "job", id)
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
