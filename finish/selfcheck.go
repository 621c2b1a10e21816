package finish

import (
	"cmp"
	"encoding/hex"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A verifier block proves nothing when the processor that ran the verifier
// MicroJob also ran the regular MicroJob holding the same block, and no one
// else ran either: a consistent liar agrees with itself. Such a block is
// self-checked. It is re-run by processors drawn from the others and
// settled by the dispute rule (escalate.go) with one side: the processor's
// hash is one vote, each re-runner's answer one, and the vote escalates
// until a hash leads by the margin. The processor is a culprit when its
// hash lost; a re-runner never is (it need not be a member of the job's
// escrow), so colluding re-runners cannot convict an honest processor nor
// one honest re-runner.

// SelfCheck is one self-checked block of a verdict.
type SelfCheck struct {
	Block     uint64
	Processor string
	Hash      string
}

// SelfChecked lists the verdict's self-checked blocks, by block: verifier
// blocks for which every (verifier result, regular result) pair comes from
// one processor.
func SelfChecked(plan *jobs.Plan, v microjob.Verdict) []SelfCheck {
	byMicro := map[string][]microjob.Result{}
	for _, r := range v.Results {
		byMicro[r.MicroID] = append(byMicro[r.MicroID], r)
	}
	var out []SelfCheck
	for _, m := range plan.Macros {
		ver := m.Verifier()
		if ver == nil {
			continue
		}
		vres := byMicro[ver.ID.String()]
		if len(vres) == 0 {
			continue
		}
		for pos, block := range ver.Blocks {
			cp, cpos, err := plan.Counterpart(ver.ID, pos)
			if err != nil {
				continue
			}
			rres := byMicro[cp.ID.String()]
			independent := len(rres) == 0
			for _, a := range vres {
				for _, b := range rres {
					independent = independent || a.Processor != b.Processor
				}
			}
			if independent || pos >= len(vres[0].Hashes) || cpos >= len(rres[0].Hashes) {
				continue
			}
			out = append(out, SelfCheck{Block: block, Processor: vres[0].Processor, Hash: vres[0].Hashes[pos]})
		}
	}
	slices.SortFunc(out, func(a, b SelfCheck) int { return int(a.Block) - int(b.Block) })
	return out
}

// CheckOutcome is what the re-runs of a self-checked block say under the
// rule e (EscalationFor the job's plan): done is false while the vote
// goes on or is undecided (or no check is requested yet); culprit is ""
// when the processor's hash stands.
func (e Escalation) CheckOutcome(recs *Records, sc SelfCheck) (culprit string, done bool) {
	r := e.CheckRuling(recs, sc)
	switch {
	case r.Outcome != VoteWon:
		return "", false
	case r.Winner != sc.Hash:
		return sc.Processor, true
	}
	return "", true
}

// CheckRuling is the rule on self-checked block sc with the check of its
// block in recs: the processor's hash is the one side, and the named
// re-runners that were not dropped vote. Without a check the vote
// escalates from the processor's lone vote.
func (e Escalation) CheckRuling(recs *Records, sc SelfCheck) Ruling {
	c, ok := recs.Checks[sc.Block]
	if !ok || c.Processor != sc.Processor {
		return e.rule([]string{sc.Hash}, 0, nil, 0, false)
	}
	asked, silent := askedOf(recs, sc.Block, CheckRerunners(c), c.Dropped, []string{sc.Processor})
	return e.rule([]string{sc.Hash}, len(asked), answers(recs, sc.Block, asked), silent, c.Exhausted)
}

// CheckRerunners are the re-runners a check names: its two thirds, then
// those drawn as it escalated. A silent one may stay named to fill Thirds,
// and dropped: it does not vote.
func CheckRerunners(c records.Check) []string {
	return append(c.Thirds[:], c.More...)
}

// validCheck reports whether a check keeps the content rules: valid
// thirds, and re-runners that are distinct and not the checked processor.
func validCheck(c records.Check) bool {
	if !c.Valid() {
		return false
	}
	named := CheckRerunners(c)
	for i, p := range named {
		if p == "" || p == c.Processor || slices.Contains(named[:i], p) {
			return false
		}
	}
	return true
}

// NextCheck is the check a finalizer writes for self-checked block sc
// of job id after ruling r (CheckRuling) on prev, the check in force (nil:
// none), as NextRequest for a dispute: silent re-runners are dropped (but
// stay named while Thirds needs them), and an escalating ruling names the
// next re-runners of the block's rerun order over cands. ok is false when
// there is nothing new to write, or fewer than two re-runners.
func (e Escalation) NextCheck(id jobs.ID, sc SelfCheck, prev *records.Check, r Ruling, silent []string, cands []Candidate, unable func(string) bool) (records.Check, bool) {
	rec := records.Check{Block: sc.Block, Processor: sc.Processor, Hash: sc.Hash}
	var rd round
	if prev != nil {
		rec = *prev
		rd = round{named: CheckRerunners(*prev), dropped: prev.Dropped, exhausted: prev.Exhausted}
	}
	order := RerunOrder(id, records.CheckType, sc.Block, cands, []string{sc.Processor})
	e.next(&rd, []string{sc.Hash}, r, silent, 2, order, unable)
	if len(rd.named) < 2 || !rd.changed {
		return records.Check{}, false
	}
	rec.Thirds, rec.More, rec.Dropped, rec.Exhausted = [2]string{rd.named[0], rd.named[1]}, slices.Clone(rd.named[2:]), rd.dropped, rd.exhausted
	return rec, true
}

// checkedBlocks lists the checks in recs whose processor disclosed, in
// one of its disclosures of the job, the hash the check names for its
// block. A block stops being self-checked once another processor's result
// covers it too (a redo, or a room run that came late); the re-runs its
// check asked for still say whether the processor lied about it.
func checkedBlocks(recs *Records) []SelfCheck {
	var out []SelfCheck
	for block, c := range recs.Checks {
		if slices.ContainsFunc(recs.Discl, func(d microjob.Disclosure) bool {
			pos := slices.Index(d.BlockIndices, block)
			return d.Processor == c.Processor && pos >= 0 && pos < len(d.BlockHashes) &&
				hex.EncodeToString(d.BlockHashes[pos][:]) == c.Hash
		}) {
			out = append(out, SelfCheck{Block: block, Processor: c.Processor, Hash: c.Hash})
		}
	}
	return out
}

// ChecksAhead counts the checks in recs whose processor has no disclosure
// in recs.
func ChecksAhead(recs *Records) int {
	n := 0
	for _, c := range recs.Checks {
		if !slices.ContainsFunc(recs.Discl, func(d microjob.Disclosure) bool { return d.Processor == c.Processor }) {
			n++
		}
	}
	return n
}

// CheckTargets lists, by block, the verdict's self-checked blocks and the
// other checks whose processor disclosed the hash they name
// (checkedBlocks): the checks a verdict waits for and that name culprits.
func CheckTargets(plan *jobs.Plan, v microjob.Verdict, recs *Records) []SelfCheck {
	out := SelfChecked(plan, v)
	for _, sc := range checkedBlocks(recs) {
		if !slices.ContainsFunc(out, func(o SelfCheck) bool { return o.Block == sc.Block && o.Processor == sc.Processor }) {
			out = append(out, sc)
		}
	}
	slices.SortFunc(out, func(a, b SelfCheck) int {
		return cmp.Or(cmp.Compare(a.Block, b.Block), cmp.Compare(a.Processor, b.Processor))
	})
	return out
}

// CheckCulprits returns the culprits the settled checks name
// (CheckTargets).
func CheckCulprits(plan *jobs.Plan, v microjob.Verdict, recs *Records) []string {
	return EscalationFor(plan).checkCulprits(plan, v, recs)
}

func (e Escalation) checkCulprits(plan *jobs.Plan, v microjob.Verdict, recs *Records) []string {
	var out []string
	for _, sc := range CheckTargets(plan, v, recs) {
		if c, done := e.CheckOutcome(recs, sc); done && c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// ChecksPending reports whether a check target of v is not settled.
func ChecksPending(plan *jobs.Plan, v microjob.Verdict, recs *Records) bool {
	esc := EscalationFor(plan)
	return slices.ContainsFunc(CheckTargets(plan, v, recs), func(sc SelfCheck) bool {
		_, done := esc.CheckOutcome(recs, sc)
		return !done
	})
}

// ChecksSettled reports whether every check target of v (CheckTargets) is
// settled, or cannot be checked for want of two places in its rerun order
// (over recs.Candidates, or procs ranked by peer ID for a reader without
// candidates): what a finalizer waits for before it writes a verdict
// (requestChecks), so what a reader requires of one.
func ChecksSettled(plan *jobs.Plan, v microjob.Verdict, recs *Records, procs []string) bool {
	esc := EscalationFor(plan)
	for _, sc := range CheckTargets(plan, v, recs) {
		if _, done := esc.CheckOutcome(recs, sc); done {
			continue
		}
		cands := recs.Candidates
		if cands == nil {
			cands = PeerCandidates(procs)
		}
		if len(RerunOrder(plan.JobID, records.CheckType, sc.Block, cands, []string{sc.Processor})) >= 2 {
			return false
		}
	}
	return true
}

// HasRerun reports whether processor has stored its re-run of block.
func HasRerun(recs *Records, block uint64, processor string) bool {
	return slices.ContainsFunc(recs.Reruns[block], func(r records.Rerun) bool { return r.Processor == processor })
}
