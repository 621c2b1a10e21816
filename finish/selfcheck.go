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
// self-checked. It is re-run by two processors drawn from the others, and
// the majority of the three hashes decides: when both re-runs differ from
// the processor's hash and agree with each other, the processor is a
// culprit; when they differ from each other, the re-runner that disagrees
// with the other two hashes is. One lying re-runner cannot convict an
// honest processor, because it is outvoted.

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

// CheckOutcome is what the re-runs of a self-checked block say: done is
// false while a re-run is missing (or no check is requested yet); culprit
// is "" when the processor's hash stands.
func CheckOutcome(recs *Records, sc SelfCheck) (culprit string, done bool) {
	c, ok := recs.Checks[sc.Block]
	if !ok || c.Processor != sc.Processor {
		return "", false
	}
	if c.Exhausted {
		// Too few live processors for a majority of three: a re-run that
		// agrees confirms the block; a disagreement cannot be decided.
		agree := false
		for _, third := range c.Thirds {
			for _, rr := range recs.Reruns[sc.Block] {
				if rr.Processor != third {
					continue
				}
				if rr.Hash != sc.Hash {
					return "", false
				}
				agree = true
			}
		}
		return "", agree
	}
	var h [2]string
	for i, third := range c.Thirds {
		for _, rr := range recs.Reruns[sc.Block] {
			if rr.Processor == third {
				h[i] = rr.Hash
			}
		}
		if h[i] == "" {
			return "", false
		}
	}
	switch {
	case h[0] == h[1] && h[0] != sc.Hash:
		return sc.Processor, true
	case h[0] == h[1]:
		return "", true
	case h[0] == sc.Hash:
		return c.Thirds[1], true
	case h[1] == sc.Hash:
		return c.Thirds[0], true
	}
	// Three different hashes: no majority. The block stays unverified
	// (the job waits; see docs/ARCHITECTURE.md).
	return "", false
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
	var out []string
	for _, sc := range CheckTargets(plan, v, recs) {
		if c, done := CheckOutcome(recs, sc); done && c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// ChecksPending reports whether a check target of v is not settled.
func ChecksPending(plan *jobs.Plan, v microjob.Verdict, recs *Records) bool {
	return slices.ContainsFunc(CheckTargets(plan, v, recs), func(sc SelfCheck) bool {
		_, done := CheckOutcome(recs, sc)
		return !done
	})
}

// ChecksSettled reports whether every check target of v (CheckTargets) is
// settled, or cannot be checked for want of two processors other than the
// checked one among procs: what a finalizer waits for before it writes a
// verdict (requestChecks), so what a reader requires of one.
func ChecksSettled(plan *jobs.Plan, v microjob.Verdict, recs *Records, procs []string) bool {
	for _, sc := range CheckTargets(plan, v, recs) {
		if _, done := CheckOutcome(recs, sc); done {
			continue
		}
		others := 0
		for _, p := range procs {
			if p != sc.Processor {
				others++
			}
		}
		if others >= 2 {
			return false
		}
	}
	return true
}

// HasRerun reports whether processor has stored its re-run of block.
func HasRerun(recs *Records, block uint64, processor string) bool {
	return slices.ContainsFunc(recs.Reruns[block], func(r records.Rerun) bool { return r.Processor == processor })
}
