package processor

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// RoundOrder is one MacroJob's two submission rounds (seed 003) as the
// finalizer saw them: the processors in commitment order and in disclosure
// order. The verdict record carries one per MacroJob, so that the QoS
// ledger and the fee split of every node read the same order instead of
// deriving it from records that may not have replicated alike.
type RoundOrder struct {
	// Macro is the MacroJob index.
	Macro uint64 `json:"macro"`
	// Commits are the processors (peer IDs) that committed a MicroJob of
	// the MacroJob, earliest first; at most dispatch.MaxTaskProcessors.
	Commits []string `json:"commits"`
	// Disclosures are the committers that disclosed, earliest first.
	Disclosures []string `json:"disclosures"`
}

// maxPeerIDLen bounds a peer ID in a round (a libp2p peer ID in text is
// 46 to 59 characters; dispatch caps IDs at dispatch.MaxIDLen).
const maxPeerIDLen = dispatch.MaxIDLen

// roundSeqs collects, per MacroJob and round, each processor's earliest
// record seq: the input of the round order.
type roundSeqs struct {
	commits, discl map[uint64]map[string]uint64
}

func (s *roundSeqs) commit(macro uint64, processor string, seq uint64) {
	if s.commits == nil {
		s.commits = map[uint64]map[string]uint64{}
	}
	noteEarliest(s.commits, macro, processor, seq)
}

func (s *roundSeqs) disclose(macro uint64, processor string, seq uint64) {
	if s.discl == nil {
		s.discl = map[uint64]map[string]uint64{}
	}
	noteEarliest(s.discl, macro, processor, seq)
}

func noteEarliest(m map[uint64]map[string]uint64, macro uint64, processor string, seq uint64) {
	if m[macro] == nil {
		m[macro] = map[string]uint64{}
	}
	if s, ok := m[macro][processor]; !ok || seq < s {
		m[macro][processor] = seq
	}
}

// orders returns the rounds of every MacroJob with a commitment, by
// MacroJob index: each round ordered by the processors' earliest record
// (seq, then peer ID), commitments cut to the dispatch.MaxTaskProcessors
// earliest, disclosures kept only from those committers. This is the one
// rule the finalizer writes into the verdict and the QoS replay falls back
// to for a verdict without rounds.
func (s *roundSeqs) orders() []RoundOrder {
	out := make([]RoundOrder, 0, len(s.commits))
	for _, m := range slices.Sorted(maps.Keys(s.commits)) {
		commits := roundOrder(s.commits[m], nil)
		if len(commits) > dispatch.MaxTaskProcessors {
			commits = commits[:dispatch.MaxTaskProcessors]
		}
		out = append(out, RoundOrder{
			Macro:       m,
			Commits:     commits,
			Disclosures: roundOrder(s.discl[m], slices.Sorted(slices.Values(commits))),
		})
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

// finalRounds are the rounds the finalizer writes into the verdict: from
// the job's valid commitment and disclosure records whose MicroJob belongs,
// in the plan, to the MacroJob they name.
func finalRounds(plan *jobs.Plan, recs *jobRecords) []RoundOrder {
	inPlan := func(macro uint64, micro jobs.ID) bool {
		mu, err := plan.MicroJob(micro)
		return err == nil && mu.Macro == macro
	}
	var s roundSeqs
	for i, c := range recs.commits {
		if inPlan(c.MacroIndex, c.MicroID) {
			s.commit(c.MacroIndex, c.Processor, recs.commitSeqs[i])
		}
	}
	for i, d := range recs.discl {
		if inPlan(d.MacroIndex, d.MicroID) {
			s.disclose(d.MacroIndex, d.Processor, recs.disclSeqs[i])
		}
	}
	return s.orders()
}

// checkRounds checks the rounds of a verdict record: MacroJob indices
// strictly ascending and each one a MacroJob the verdict accepted verifier
// hashes for (a verified verdict has them for every MacroJob of the plan,
// so the rounds stay within the plan); in each round at least one and at
// most dispatch.MaxTaskProcessors committers, every peer ID non-empty,
// bounded and listed once per round, and only committers disclosing.
func checkRounds(rounds []RoundOrder, v microjob.Verdict) error {
	if len(rounds) > len(v.VerifierHashes) {
		return fmt.Errorf("%w: %d rounds, %d MacroJobs", ErrBadRecord, len(rounds), len(v.VerifierHashes))
	}
	for i, r := range rounds {
		if i > 0 && r.Macro <= rounds[i-1].Macro {
			return fmt.Errorf("%w: rounds of MacroJob %d after %d", ErrBadRecord, r.Macro, rounds[i-1].Macro)
		}
		if _, ok := v.VerifierHashes[r.Macro]; !ok {
			return fmt.Errorf("%w: rounds of MacroJob %d, which the verdict does not hold", ErrBadRecord, r.Macro)
		}
		if len(r.Commits) == 0 || len(r.Commits) > dispatch.MaxTaskProcessors || len(r.Disclosures) > len(r.Commits) {
			return fmt.Errorf("%w: MacroJob %d: %d commits, %d disclosures", ErrBadRecord, r.Macro, len(r.Commits), len(r.Disclosures))
		}
		committed := make(map[string]bool, len(r.Commits))
		for _, p := range r.Commits {
			if p == "" || len(p) > maxPeerIDLen || committed[p] {
				return fmt.Errorf("%w: MacroJob %d: committer %q empty, too long or listed twice", ErrBadRecord, r.Macro, p)
			}
			committed[p] = true
		}
		disclosed := make(map[string]bool, len(r.Disclosures))
		for _, p := range r.Disclosures {
			if !committed[p] || disclosed[p] {
				return fmt.Errorf("%w: MacroJob %d: discloser %q did not commit or is listed twice", ErrBadRecord, r.Macro, p)
			}
			disclosed[p] = true
		}
	}
	return nil
}

// taskOutcome is a MacroJob's rounds as a QoS task of job id.
func (r RoundOrder) taskOutcome(id jobs.ID) dispatch.TaskOutcome {
	return dispatch.TaskOutcome{
		TaskID:      id.String() + "/macro/" + strconv.FormatUint(r.Macro, 10),
		Assigned:    slices.Sorted(slices.Values(r.Commits)),
		Commits:     slices.Clone(r.Commits),
		Disclosures: slices.Clone(r.Disclosures),
	}
}
