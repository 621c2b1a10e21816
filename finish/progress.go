package finish

import (
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
)

// Progress says how far a job's MicroJobs are: which are committed and by
// whom, whether a MacroJob's commitment round is over, and whether every
// MicroJob is disclosed. It is the one answer to these questions; the
// rooms, the turns, disclosure, redo, the group's bookkeeping and the
// silent committers' rule (SilentCommitters) all ask it. A node's record
// index builds it from its counters (jobindex.Index.Progress), anyone
// else from the records (ProgressOf).
//
// A job with R > 1 replicas (a group job) needs R distinct committers of
// a MicroJob before its commitment round is over (Full): only then are
// its MacroJob's results disclosed, so that no replica can copy another's
// disclosed hashes. A Progress is a snapshot: it does not change.
type Progress struct {
	t        *tally
	replicas int
}

// tally is the snapshot a Progress reads, shared by its copies.
type tally struct {
	// committers are, by MicroJob, the distinct processors with a
	// commitment, sorted.
	committers map[jobs.ID][]string
	// disclosed counts the MicroJobs with at least one disclosure.
	disclosed int
}

// NewProgress is the progress of a job of one replica whose MicroJobs
// have the committers given (by MicroJob, distinct and sorted) and of
// which disclosed MicroJobs have a disclosure. Progress keeps committers:
// the caller must not modify it afterwards.
func NewProgress(committers map[jobs.ID][]string, disclosed int) Progress {
	return Progress{t: &tally{committers: committers, disclosed: disclosed}, replicas: 1}
}

// WithReplicas is p for a job of replicas processors per MicroJob.
func (p Progress) WithReplicas(replicas int) Progress {
	p.replicas = max(replicas, 1)
	return p
}

// ProgressOf is the progress that records recs show, for a job of
// replicas processors per MicroJob.
func ProgressOf(recs *Records, replicas int) Progress {
	t := &tally{committers: map[jobs.ID][]string{}}
	for _, c := range recs.Commits {
		if !slices.Contains(t.committers[c.MicroID], c.Processor) {
			t.committers[c.MicroID] = append(t.committers[c.MicroID], c.Processor)
		}
	}
	for _, ps := range t.committers {
		slices.Sort(ps)
	}
	disclosed := map[jobs.ID]bool{}
	for _, d := range recs.Discl {
		disclosed[d.MicroID] = true
	}
	t.disclosed = len(disclosed)
	return Progress{t: t, replicas: max(replicas, 1)}
}

// Started reports whether any MicroJob has a commitment.
func (p Progress) Started() bool { return p.t != nil && len(p.t.committers) > 0 }

// Committed reports whether MicroJob mid has a commitment.
func (p Progress) Committed(mid jobs.ID) bool { return len(p.CommittedBy(mid)) > 0 }

// CommittedBy returns the distinct processors with a commitment of
// MicroJob mid, sorted. The slice is shared: callers must not modify it.
func (p Progress) CommittedBy(mid jobs.ID) []string {
	if p.t == nil {
		return nil
	}
	return p.t.committers[mid]
}

// CommittedByOther reports whether a processor other than self has a
// commitment of MicroJob mid.
func (p Progress) CommittedByOther(mid jobs.ID, self string) bool {
	by := p.CommittedBy(mid)
	return len(by) > 1 || len(by) == 1 && by[0] != self
}

// Full reports whether MicroJob mid's commitment round is over: it has a
// commitment, or R distinct committers in a group job.
func (p Progress) Full(mid jobs.ID) bool { return len(p.CommittedBy(mid)) >= p.replicas }

// MacroFull reports whether every MicroJob of m is Full: the MacroJob's
// results may be disclosed. A MacroJob whose verifier is not drawn yet
// (a public plan, jobs.Plan.WithChecks) is never Full: its verifier must
// commit before anything of it is disclosed, so that the verifier cannot
// copy the hashes it checks. also are MicroJobs about to be committed in
// the same store batch as the disclosures; they count as Full for a job
// of one replica only (in a group job one more commitment need not make
// R).
func (p Progress) MacroFull(m *jobs.MacroJob, also map[jobs.ID]bool) bool {
	if m.Verifier() == nil {
		return false
	}
	for _, mu := range m.Micros {
		if !p.Full(mu.ID) && !(p.replicas == 1 && also[mu.ID]) {
			return false
		}
	}
	return true
}

// Unneeded returns the MicroJobs processor self has no reason to run:
// those Full, and those it committed itself. The map is the caller's.
func (p Progress) Unneeded(self string) map[jobs.ID]bool {
	out := map[jobs.ID]bool{}
	if p.t == nil {
		return out
	}
	for m, by := range p.t.committers {
		if len(by) >= p.replicas || slices.Contains(by, self) {
			out[m] = true
		}
	}
	return out
}

// Active returns the processors with a commitment of any MicroJob. The
// map is the caller's.
func (p Progress) Active() map[string]bool {
	out := map[string]bool{}
	if p.t == nil {
		return out
	}
	for _, by := range p.t.committers {
		for _, q := range by {
			out[q] = true
		}
	}
	return out
}

// RegularsCommitted reports whether every regular MicroJob of plan has a
// commitment: the moment the job's check seed may be revealed.
func (p Progress) RegularsCommitted(plan *jobs.Plan) bool {
	for i := range plan.Macros {
		m := &plan.Macros[i]
		for _, mu := range m.Micros[:m.Regular] {
			if !p.Committed(mu.ID) {
				return false
			}
		}
	}
	return true
}

// DisclosedAll reports whether every MicroJob of plan has a disclosure.
func (p Progress) DisclosedAll(plan *jobs.Plan) bool {
	return p.t != nil && plan.Checked() && p.t.disclosed >= plan.NumMicroJobs()
}
