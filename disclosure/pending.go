package disclosure

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Jobs is what Pending asks of the jobs the node follows.
type Jobs interface {
	// Progress returns the progress of job id, counting its replicas,
	// and its plan; ok is false when the node no longer follows the job.
	Progress(ctx context.Context, id jobs.ID) (p finish.Progress, plan *jobs.Plan, ok bool, err error)
}

// MaxHold bounds Pending.Hold; MaxTurnHold bounds the wait for a running
// turn that is expected to end later than that.
const (
	MaxHold     = 500 * time.Millisecond
	MaxTurnHold = 5 * time.Second
)

// Pending is the list of a node's disclosures waiting for their
// MacroJob's commitment round, with what it needs to hold due ones for a
// running turn. The zero Pending is empty and holds nothing; its methods
// may be called concurrently. It calls nobody back while it holds its
// lock: Jobs is asked with the list's lock released.
type Pending struct {
	// Hold is how long a due disclosure may wait for a running turn to
	// carry it, at most MaxHold (the processor gives its Poll); zero: it
	// does not wait. Set it before the first use.
	Hold time.Duration

	// round serializes the rounds (Begin to End): the settle loop writes
	// due disclosures alone, a turn with its commitments.
	round sync.Mutex

	mu   sync.Mutex
	list []microjob.Disclosure
	// since is, by disclosure key, when a round first found a disclosure
	// due but held it for the running turn to carry.
	since map[string]time.Time
	// turns counts the turns running now; turnEnd is when they are
	// expected to end.
	turns   int
	turnEnd time.Time
}

// Add makes ds pending.
func (p *Pending) Add(ds ...microjob.Disclosure) {
	p.mu.Lock()
	p.list = append(p.list, ds...)
	p.mu.Unlock()
}

// Len is how many disclosures are pending.
func (p *Pending) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.list)
}

// StartTurn records that a turn of n MicroJobs started at now, at the
// job's pace per (0: unknown). The estimate of its end has half again as
// much as the pace says, so that a turn a little slower than the last
// ones still carries what waited for it.
func (p *Pending) StartTurn(now time.Time, n int, per time.Duration) {
	end := now.Add(time.Duration(n) * per * 3 / 2)
	p.mu.Lock()
	p.turns++
	if end.After(p.turnEnd) {
		p.turnEnd = end
	}
	p.mu.Unlock()
}

// EndTurn ends a turn started with StartTurn. It reports whether that was
// the last running turn and disclosures are held for it: they are due at
// once, and the caller wakes whoever writes them.
func (p *Pending) EndTurn() (held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turns--
	return p.turns == 0 && len(p.since) > 0
}

// hold is Hold within its bound.
func (p *Pending) hold() time.Duration { return min(p.Hold, MaxHold) }

// Round is one pass at writing the due disclosures. From Begin to End it
// has the disclosures that were pending at Begin to itself; those added
// meanwhile stay pending.
type Round struct {
	p    *Pending
	ctx  context.Context
	jobs Jobs
	also map[jobs.ID]bool
	n    int // how many pending disclosures it took
	// Due are the disclosures to write now; keep those that wait.
	Due  []microjob.Disclosure
	keep []microjob.Disclosure
}

// Begin starts a round over the pending disclosures: Due are those whose
// MacroJob is fully committed, counting the MicroJobs in also (about to
// be committed in the same store batch) as committed. Disclosures of jobs
// the node no longer follows are dropped. The caller ends the round with
// End.
func (p *Pending) Begin(ctx context.Context, js Jobs, also map[jobs.ID]bool) *Round {
	p.round.Lock()
	p.mu.Lock()
	taken := slices.Clone(p.list)
	p.mu.Unlock()
	r := &Round{p: p, ctx: ctx, jobs: js, also: also, n: len(taken)}
	r.Due, r.keep = r.Split(taken)
	return r
}

// Split splits ds into the disclosures whose MacroJob is fully committed
// (finish.Progress.MacroFull), counting the round's also as committed,
// and the rest; those of jobs the node no longer follows are in neither.
// A job whose progress cannot be read keeps its disclosures.
func (r *Round) Split(ds []microjob.Disclosure) (due, later []microjob.Disclosure) {
	type macroKey struct {
		job   jobs.ID
		macro uint64
	}
	full := map[macroKey]bool{} // each MacroJob met, judged once
	for _, d := range ds {
		k := macroKey{d.JobID, d.MacroIndex}
		ok, seen := full[k]
		if !seen {
			p, plan, follow, err := r.jobs.Progress(r.ctx, d.JobID)
			switch {
			case err != nil:
				later = append(later, d)
				continue
			case !follow || d.MacroIndex >= uint64(len(plan.Macros)):
				continue
			}
			ok = p.MacroFull(&plan.Macros[d.MacroIndex], r.also)
			full[k] = ok
		}
		if ok {
			due = append(due, d)
		} else {
			later = append(later, d)
		}
	}
	return due, later
}

// HoldFor keeps back, while a turn is running, the due disclosures that
// may still wait at now for it to carry them: each waits Hold from when a
// round first found it due, and while the running turns are expected to
// go on, up to MaxTurnHold.
func (r *Round) HoldFor(now time.Time) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(r.Due) == 0 || p.turns == 0 {
		return
	}
	if p.since == nil {
		p.since = map[string]time.Time{}
	}
	var out []microjob.Disclosure
	for _, d := range r.Due {
		k := records.DisclosureKey(d)
		since, ok := p.since[k]
		if !ok {
			p.since[k], since = now, now
		}
		if held := now.Sub(since); held >= p.hold() && (!now.Before(p.turnEnd) || held >= MaxTurnHold) {
			out = append(out, d)
		} else {
			r.keep = append(r.keep, d)
		}
	}
	r.Due = out
}

// End ends the round. written says whether Due was written: if not, Due
// stays pending. Disclosures of jobs retired while held leave no hold
// behind.
func (r *Round) End(written bool) {
	p := r.p
	p.mu.Lock()
	if written {
		for _, d := range r.Due {
			delete(p.since, records.DisclosureKey(d))
		}
	} else {
		r.keep = append(r.keep, r.Due...)
	}
	p.list = append(r.keep, p.list[r.n:]...)
	if len(r.keep) == 0 {
		clear(p.since)
	}
	p.mu.Unlock()
	p.round.Unlock()
}

// Entries are the store entries of disclosures ds.
func Entries(ds []microjob.Disclosure) []crdt.Entry {
	entries := make([]crdt.Entry, len(ds))
	for i, d := range ds {
		entries[i] = crdt.Entry{Key: records.DisclosureKey(d), Type: records.ResultType, Payload: d.Encode()}
	}
	return entries
}
