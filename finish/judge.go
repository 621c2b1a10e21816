package finish

import (
	"fmt"
	"maps"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// Final reports whether judgement j is one a verdict may follow from:
// verified, and every check it waits for settled, as the finalizer
// requires before it writes (procs: the advertised processors).
func (j Judgement) Final(plan *jobs.Plan, procs []string) bool {
	return j.V.Verified && ChecksSettled(plan, j.V, j.Recs, procs)
}

// Judgement is what Judge finds in a job's records.
type Judgement struct {
	V        microjob.Verdict
	Culprits []string // sorted
	Redo     []string // MicroJobs to redo, sorted
	// Recs are the records as the judgement accepts them: the disputes,
	// checks and redos of eligible authors (authors.go), one each.
	Recs *Records
	// Order is FinalizerOrder: who may write the job's verdict and
	// requests, highest-ranked first.
	Order []string
	// Refused are the requests refused outright.
	Refused []Refusal
}

// Judge applies the store's re-runs to the verdict of the job of info
// and plan until no new culprit appears: culprits' results are then left
// out and their MicroJobs redone. A dispute is settled by the protocol's
// escalation rule (EscalationFor, escalate.go): a won vote names the
// losing sides culprits (microjob.Resolve), an undecided one is listed
// in the verdict's Undecided (microjob.Undecide). Only requests by
// eligible authors count, and a culprit's stop counting once it is found
// (authors.go).
// (A verifier block whose regular counterpart was run by the same
// processor proves nothing; it is re-run and voted on by the same rule,
// the processor's hash its one side, and no re-runner is ever a culprit:
// selfcheck.go.)
func Judge(info *jobs.JobInfo, plan *jobs.Plan, recs *Records) (Judgement, error) {
	return JudgeWith(info, plan, recs, EscalationFor(plan))
}

// JudgeWith is Judge with the escalation rule esc, for the rule's tests;
// a judgement with another rule than its readers' does not count.
func JudgeWith(info *jobs.JobInfo, plan *jobs.Plan, recs *Records, esc Escalation) (Judgement, error) {
	if !plan.Checked() {
		// A public plan has no verifiers: judging it would credit
		// unchecked work.
		return Judgement{}, fmt.Errorf("finish: judging job %s: %w", plan.JobID, ErrChecksPending)
	}
	if err := esc.Validate(); err != nil {
		return Judgement{}, err
	}
	excluded := map[string]bool{}
	var pool map[string]bool
	eligible := func(p string) bool { return pool[p] && !excluded[p] }
	replicated := info.Requirements.Replicas > 1
	var redo []string
	for {
		pool = Finalizers(recs, slices.Sorted(maps.Keys(excluded)))
		acc := recs.Accept(plan.JobID, eligible)
		keep := func(p string) bool { return !excluded[p] }
		var commits []microjob.Commitment
		for _, c := range recs.Commits {
			if keep(c.Processor) || replicated { // a culprit still counts toward R (package groupjob)
				commits = append(commits, c)
			}
		}
		var discl []microjob.Disclosure
		for _, d := range recs.Discl {
			if keep(d.Processor) {
				discl = append(discl, d)
			}
		}
		v, err := microjob.Judge(info, plan, commits, discl)
		if err != nil {
			return Judgement{}, err
		}
		v = settleDisputes(v, acc, esc)
		fresh := false
		for _, c := range append(slices.Clone(v.Culprits), esc.checkCulprits(plan, v, acc)...) {
			if !excluded[c] {
				excluded[c] = true
				fresh = true
			}
		}
		redo = append(redo, v.Redo...)
		if fresh {
			// The culprit's MicroJobs need other hands.
			for _, r := range v.Results {
				if excluded[r.Processor] {
					redo = append(redo, r.MicroID)
				}
			}
			continue
		}
		culprits := make([]string, 0, len(excluded))
		for c := range excluded {
			culprits = append(culprits, c)
		}
		slices.Sort(culprits)
		slices.Sort(redo)
		acc.acceptRedos(plan, culprits, eligible)
		return Judgement{V: v, Culprits: culprits, Redo: slices.Compact(redo), Recs: acc,
			Order: FinalizerOrder(plan.JobID, recs, culprits), Refused: acc.refusals(plan, pool, culprits)}, nil
	}
}

// settleDisputes applies the escalation rule esc to each open dispute of
// v with the requests and re-runs in acc. A dispute a culprit found before
// it is a side of is closed already, and Resolve refuses it.
func settleDisputes(v microjob.Verdict, acc *Records, esc Escalation) microjob.Verdict {
	for _, d := range slices.Clone(v.Disputes) {
		var nv microjob.Verdict
		var err error
		switch r := esc.RuleOf(acc, d); r.Outcome {
		case VoteWon:
			nv, err = microjob.Resolve(v, d, r.Votes, r.Winner)
		case VoteUndecided:
			nv, err = microjob.Undecide(v, d, r.Votes, r.Reason)
		default:
			continue
		}
		if err == nil {
			v = nv
		}
	}
	return v
}

// SilentCommitters maps each MicroJob without a valid disclosure, in a
// MacroJob whose every MicroJob has a commitment, to the processors that
// committed it (sorted).
func SilentCommitters(plan *jobs.Plan, recs *Records, v microjob.Verdict) map[string][]string {
	if len(v.Missing) == 0 {
		return nil
	}
	p := ProgressOf(recs, 1)
	out := map[string][]string{}
	for _, m := range v.Missing {
		id, err := jobs.ParseHash(m)
		if err != nil || !p.Committed(id) {
			continue
		}
		mu, err := plan.MicroJob(id)
		if err != nil {
			continue
		}
		if p.MacroFull(&plan.Macros[mu.Macro], nil) {
			out[m] = slices.Clone(p.CommittedBy(id))
		}
	}
	return out
}
