package processor

import (
	"context"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Disclosure is the second round of commit–reveal: a result is disclosed
// only once every MicroJob of its MacroJob is fully committed
// (finish.Progress.MacroFull), so that nobody can copy a hash it has
// not committed to before.

// disclose publishes every pending disclosure whose MacroJob has a
// commitment for each of its MicroJobs (commit–reveal: nobody can copy a
// hash it has not committed to before). While a turn is running, a due
// disclosure is held for that turn to write with its commitments, as one
// store delta instead of two: for discloseHold, and longer while the
// running turn is expected to go on (turnEnd, from the number of its
// MicroJobs and their pace), up to maxTurnHold: with turns of ten
// MicroJobs most disclosures come due in the middle of a turn. Holding
// only for a running turn, not while the worker waits in a room for one,
// keeps a job's last disclosures from waiting for turns that never come.
func (w *Worker) disclose(ctx context.Context) { w.discloseAt(ctx, time.Now()) }

// discloseAt is disclose at time now.
func (w *Worker) discloseAt(ctx context.Context, now time.Time) {
	w.discloseMu.Lock()
	defer w.discloseMu.Unlock()
	ready, keep, n := w.dueDisclosures(ctx, nil)
	if len(ready) > 0 && w.turns.Load() > 0 {
		if w.readySince == nil {
			w.readySince = map[string]time.Time{}
		}
		var out []microjob.Disclosure
		for _, d := range ready {
			since, ok := w.readySince[records.DisclosureKey(d)]
			if !ok {
				w.readySince[records.DisclosureKey(d)], since = now, now
			}
			held := now.Sub(since)
			if held >= w.discloseHold() && (!now.Before(w.turnEnd) || held >= maxTurnHold) {
				out = append(out, d)
			} else {
				keep = append(keep, d)
			}
		}
		ready = out
	}
	if len(ready) > 0 {
		if err := w.writer.PutBatch(ctx, discloseEntries(ready)); err != nil {
			keep = append(keep, ready...)
			if ctx.Err() == nil {
				w.log.Warn("writing disclosures", "count", len(ready), "err", err)
			}
		} else {
			w.disclosed(ready)
			w.log.Debug("results disclosed", "count", len(ready))
		}
	}
	w.keepPending(keep, n)
	if len(keep) == 0 {
		clear(w.readySince) // disclosures of retired jobs leave no hold behind
	}
}

// maxDiscloseHold bounds how long a due disclosure waits for a turn to
// carry it, unless the running turn is expected to end later; maxTurnHold
// bounds the wait then.
const (
	maxDiscloseHold = 500 * time.Millisecond
	maxTurnHold     = 5 * time.Second
)

// expectTurn records that a turn of n MicroJobs started at now, at the
// job's pace per (0: unknown), for disclose's hold. The estimate has half
// again as much as the pace says, so that a turn a little slower than the
// last ones still carries what waited for it.
func (w *Worker) expectTurn(now time.Time, n int, per time.Duration) {
	end := now.Add(time.Duration(n) * per * 3 / 2)
	w.discloseMu.Lock()
	if end.After(w.turnEnd) {
		w.turnEnd = end
	}
	w.discloseMu.Unlock()
}

// discloseHold is how long a due disclosure may wait for a turn to carry
// it: Poll, at most maxDiscloseHold.
func (w *Worker) discloseHold() time.Duration {
	return min(w.cfg.Poll, maxDiscloseHold)
}

// dueDisclosures splits pending into the disclosures whose MacroJob is
// fully committed, counting the MicroJobs in also as committed, and the
// rest; n is how many it read. The caller holds discloseMu and puts the
// ones it does not write back with keepPending.
func (w *Worker) dueDisclosures(ctx context.Context, also map[jobs.ID]bool) (ready, keep []microjob.Disclosure, n int) {
	w.mu.Lock()
	pending := slices.Clone(w.pending)
	w.mu.Unlock()
	ready, keep = w.splitDue(ctx, pending, also)
	return ready, keep, len(pending)
}

// splitDue splits ds into the disclosures whose MacroJob is fully
// committed, counting the MicroJobs in also as committed (see
// finish.Progress.MacroFull), and the rest.
func (w *Worker) splitDue(ctx context.Context, ds []microjob.Disclosure, also map[jobs.ID]bool) (ready, keep []microjob.Disclosure) {
	type macroKey struct {
		job   jobs.ID
		macro uint64
	}
	// Whether each MacroJob met is fully committed, asked once per call.
	full := map[macroKey]bool{}
	for _, d := range ds {
		w.mu.Lock()
		js := w.known[d.JobID]
		w.mu.Unlock()
		if js == nil {
			continue
		}
		k := macroKey{d.JobID, d.MacroIndex}
		ok, seen := full[k]
		if !seen {
			p, err := w.progressOf(ctx, js)
			if err != nil {
				keep = append(keep, d)
				continue
			}
			ok = p.MacroFull(&js.plan.Macros[d.MacroIndex], also)
			full[k] = ok
		}
		if !ok {
			keep = append(keep, d)
			continue
		}
		ready = append(ready, d)
	}
	return ready, keep
}

// keepPending makes keep the pending disclosures, with those that came in
// since the first n were read.
func (w *Worker) keepPending(keep []microjob.Disclosure, n int) {
	w.mu.Lock()
	w.pending = append(keep, w.pending[n:]...)
	w.mu.Unlock()
}

// disclosed forgets the hold times of written disclosures.
func (w *Worker) disclosed(ds []microjob.Disclosure) {
	for _, d := range ds {
		delete(w.readySince, records.DisclosureKey(d))
	}
}

// discloseEntries are the store entries of disclosures ds.
func discloseEntries(ds []microjob.Disclosure) []crdt.Entry {
	entries := make([]crdt.Entry, len(ds))
	for i, d := range ds {
		entries[i] = crdt.Entry{Key: records.DisclosureKey(d), Type: records.ResultType, Payload: d.Encode()}
	}
	return entries
}
