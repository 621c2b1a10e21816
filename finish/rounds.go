package finish

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// RoundSeqs collects, per MacroJob and round, each processor's earliest
// record seq: the input of the round order; and the seq of each
// processor's took record, the input of its lockers.
type RoundSeqs struct {
	commits, discl, took map[uint64]map[string]uint64
}

func (s *RoundSeqs) Commit(macro uint64, processor string, seq uint64) {
	if s.commits == nil {
		s.commits = map[uint64]map[string]uint64{}
	}
	noteEarliest(s.commits, macro, processor, seq)
}

func (s *RoundSeqs) Disclose(macro uint64, processor string, seq uint64) {
	if s.discl == nil {
		s.discl = map[uint64]map[string]uint64{}
	}
	noteEarliest(s.discl, macro, processor, seq)
}

func (s *RoundSeqs) Took(macro uint64, processor string, seq uint64) {
	if s.took == nil {
		s.took = map[uint64]map[string]uint64{}
	}
	noteEarliest(s.took, macro, processor, seq)
}

func noteEarliest(m map[uint64]map[string]uint64, macro uint64, processor string, seq uint64) {
	if m[macro] == nil {
		m[macro] = map[string]uint64{}
	}
	if s, ok := m[macro][processor]; !ok || seq < s {
		m[macro][processor] = seq
	}
}

// Orders returns the rounds of every MacroJob with a commitment, by
// MacroJob index: each round ordered by the processors' earliest record
// (seq, then peer ID), commitments cut to the dispatch.MaxTaskProcessors
// earliest, disclosures kept only from those committers. This is the one
// rule the finalizer writes into the verdict and the QoS replay falls back
// to for a verdict without rounds.
func (s *RoundSeqs) Orders() []records.RoundOrder {
	out := make([]records.RoundOrder, 0, len(s.commits))
	for _, m := range slices.Sorted(maps.Keys(s.commits)) {
		commits := roundOrder(s.commits[m], nil)
		if len(commits) > dispatch.MaxTaskProcessors {
			commits = commits[:dispatch.MaxTaskProcessors]
		}
		out = append(out, records.RoundOrder{
			Macro:       m,
			Commits:     commits,
			Disclosures: roundOrder(s.discl[m], slices.Sorted(slices.Values(commits))),
			Lockers:     s.lockers(m, len(commits)),
		})
	}
	return out
}

// lockers lists the processors with a took record in MacroJob m that
// committed none of its MicroJobs, earliest took record first (seq, then
// peer ID), cut to the places dispatch.MaxTaskProcessors leaves after
// kept committers; nil when there are none.
func (s *RoundSeqs) lockers(m uint64, kept int) []string {
	var out []string
	for _, p := range roundOrder(s.took[m], nil) {
		if _, committed := s.commits[m][p]; committed || p == "" || len(p) > dispatch.MaxIDLen {
			continue
		}
		if len(out) == dispatch.MaxTaskProcessors-kept {
			break
		}
		out = append(out, p)
	}
	return out
}

// roundOrder lists the processors of one round by their earliest record
// (seq, then peer ID), keeping only those in allowed (sorted) when it is
// not nil.
func roundOrder(m map[string]uint64, allowed []string) []string {
	subs := make([]submission, 0, len(m))
	for p, s := range m {
		if allowed != nil {
			if _, ok := slices.BinarySearch(allowed, p); !ok {
				continue
			}
		}
		subs = append(subs, submission{p, s})
	}
	slices.SortFunc(subs, func(a, b submission) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.processor, b.processor)
	})
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.processor
	}
	return out
}

// submission is one processor's earliest record in a round of a MacroJob.
type submission struct {
	processor string
	seq       uint64
}

// FinalRounds are the rounds the finalizer writes into the verdict and
// every reader expects in it: from the job's valid commitment and
// disclosure records whose MicroJob belongs, in the plan, to the MacroJob
// they name, and from its took records (only MacroJobs with a commitment
// have rounds).
func FinalRounds(plan *jobs.Plan, recs *Records) []records.RoundOrder {
	inPlan := func(macro uint64, micro jobs.ID) bool {
		mu, err := plan.MicroJob(micro)
		return err == nil && mu.Macro == macro
	}
	var s RoundSeqs
	for i, c := range recs.Commits {
		if inPlan(c.MacroIndex, c.MicroID) {
			s.Commit(c.MacroIndex, c.Processor, recs.CommitSeqs[i])
		}
	}
	for i, d := range recs.Discl {
		if inPlan(d.MacroIndex, d.MicroID) {
			s.Disclose(d.MacroIndex, d.Processor, recs.DisclSeqs[i])
		}
	}
	for _, t := range recs.Took {
		s.Took(t.Macro, t.Processor, t.Seq)
	}
	return s.Orders()
}

// TaskOutcome is a MacroJob's rounds as a QoS task of job id: its
// committers and its lockers were assigned it, so a locker that never
// committed times out.
func TaskOutcome(id jobs.ID, r records.RoundOrder) dispatch.TaskOutcome {
	return dispatch.TaskOutcome{
		TaskID:      id.String() + "/macro/" + strconv.FormatUint(r.Macro, 10),
		Assigned:    slices.Sorted(slices.Values(append(slices.Clone(r.Commits), r.Lockers...))),
		Commits:     slices.Clone(r.Commits),
		Disclosures: slices.Clone(r.Disclosures),
	}
}
