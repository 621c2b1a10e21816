package finish

import (
	"maps"
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
	// commitment, sorted, in buckets by the MicroJob ID's first byte; n
	// counts the MicroJobs.
	committers [committerBuckets]map[jobs.ID][]string
	n          int
	// disclosed counts the MicroJobs with at least one disclosure.
	disclosed int
}

const committerBuckets = 256

// Committers is, by MicroJob, the distinct processors with a commitment,
// kept by one owner (a record index) that changes one MicroJob at a time
// and takes a Progress after the changes: a snapshot costs a copy of the
// buckets changed since the last one, not a rebuild of the whole job,
// which a job of thousands of MicroJobs paid on every commitment. The
// zero value is empty; it is not safe for concurrent use.
type Committers struct {
	buckets [committerBuckets]map[jobs.ID][]string
	// shared marks the buckets a snapshot holds: copied before a change.
	shared [committerBuckets]bool
	n      int
}

// Set makes by (distinct, sorted; kept, so the caller must not modify it
// afterwards) the committers of MicroJob mid; none removes it.
func (c *Committers) Set(mid jobs.ID, by []string) {
	b := mid[0]
	m := c.buckets[b]
	if c.shared[b] || m == nil {
		m = maps.Clone(m)
		if m == nil {
			m = map[jobs.ID][]string{}
		}
		c.buckets[b], c.shared[b] = m, false
	}
	_, had := m[mid]
	switch {
	case len(by) == 0 && had:
		delete(m, mid)
		c.n--
	case len(by) > 0:
		if !had {
			c.n++
		}
		m[mid] = by
	}
}

// Progress is the progress of a job of one replica with these committers,
// of which disclosed MicroJobs have a disclosure: a snapshot that later
// changes to c do not reach.
func (c *Committers) Progress(disclosed int) Progress {
	for i := range c.shared {
		c.shared[i] = true
	}
	return Progress{t: &tally{committers: c.buckets, n: c.n, disclosed: disclosed}, replicas: 1}
}

// NewProgress is the progress of a job of one replica whose MicroJobs
// have the committers given (by MicroJob, distinct and sorted) and of
// which disclosed MicroJobs have a disclosure. Progress keeps the slices
// of committers: the caller must not modify them afterwards.
func NewProgress(committers map[jobs.ID][]string, disclosed int) Progress {
	var c Committers
	for m, by := range committers {
		c.Set(m, by)
	}
	return c.Progress(disclosed)
}

// WithReplicas is p for a job of replicas processors per MicroJob.
func (p Progress) WithReplicas(replicas int) Progress {
	p.replicas = max(replicas, 1)
	return p
}

// ProgressOf is the progress that records recs show, for a job of
// replicas processors per MicroJob.
func ProgressOf(recs *Records, replicas int) Progress {
	committers := map[jobs.ID][]string{}
	for _, c := range recs.Commits {
		if !slices.Contains(committers[c.MicroID], c.Processor) {
			committers[c.MicroID] = append(committers[c.MicroID], c.Processor)
		}
	}
	for _, ps := range committers {
		slices.Sort(ps)
	}
	disclosed := map[jobs.ID]bool{}
	for _, d := range recs.Discl {
		disclosed[d.MicroID] = true
	}
	return NewProgress(committers, len(disclosed)).WithReplicas(replicas)
}

// Started reports whether any MicroJob has a commitment.
func (p Progress) Started() bool { return p.t != nil && p.t.n > 0 }

// Committed reports whether MicroJob mid has a commitment.
func (p Progress) Committed(mid jobs.ID) bool { return len(p.CommittedBy(mid)) > 0 }

// CommittedBy returns the distinct processors with a commitment of
// MicroJob mid, sorted. The slice is shared: callers must not modify it.
func (p Progress) CommittedBy(mid jobs.ID) []string {
	if p.t == nil {
		return nil
	}
	return p.t.committers[mid[0]][mid]
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
	for _, bucket := range p.t.committers {
		for m, by := range bucket {
			if len(by) >= p.replicas || slices.Contains(by, self) {
				out[m] = true
			}
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
	for _, bucket := range p.t.committers {
		for _, by := range bucket {
			for _, q := range by {
				out[q] = true
			}
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
