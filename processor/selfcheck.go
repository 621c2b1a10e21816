package processor

import (
	"context"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
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

// CheckType records ask two processors to re-run a self-checked block.
const CheckType = "check"

// CheckKey is where a self-checked block's re-runs are requested. The
// re-runs themselves are stored under RerunKey, like a dispute's.
func CheckKey(id jobs.ID, block uint64) string {
	return JobKey(id) + "/check/" + strconv.FormatUint(block, 10)
}

// Check asks Thirds to re-run Block, which Processor alone computed for
// both the verifier and the regular MicroJob, with output hash Hash.
type Check struct {
	Block     uint64    `json:"block"`
	Processor string    `json:"processor"`
	Hash      string    `json:"hash"`   // lowercase hex SHA-256
	Thirds    [2]string `json:"thirds"` // distinct, neither is Processor
}

// selfCheck is one self-checked block of a verdict.
type selfCheck struct {
	block     uint64
	processor string
	hash      string
}

// selfChecked lists the verdict's self-checked blocks, by block: verifier
// blocks for which every (verifier result, regular result) pair comes from
// one processor.
func selfChecked(plan *jobs.Plan, v microjob.Verdict) []selfCheck {
	byMicro := map[string][]microjob.Result{}
	for _, r := range v.Results {
		byMicro[r.MicroID] = append(byMicro[r.MicroID], r)
	}
	var out []selfCheck
	for _, m := range plan.Macros {
		ver := m.Micros[m.VerifierSlot]
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
			out = append(out, selfCheck{block: block, processor: vres[0].Processor, hash: vres[0].Hashes[pos]})
		}
	}
	slices.SortFunc(out, func(a, b selfCheck) int { return int(a.block) - int(b.block) })
	return out
}

// checkOutcome is what the re-runs of a self-checked block say: done is
// false while a re-run is missing (or no check is requested yet); culprit
// is "" when the processor's hash stands.
func checkOutcome(recs *jobRecords, sc selfCheck) (culprit string, done bool) {
	c, ok := recs.checks[sc.block]
	if !ok || c.Processor != sc.processor {
		return "", false
	}
	var h [2]string
	for i, third := range c.Thirds {
		for _, rr := range recs.reruns[sc.block] {
			if rr.Processor == third {
				h[i] = rr.Hash
			}
		}
		if h[i] == "" {
			return "", false
		}
	}
	switch {
	case h[0] == h[1] && h[0] != sc.hash:
		return sc.processor, true
	case h[0] == h[1]:
		return "", true
	case h[0] == sc.hash:
		return c.Thirds[1], true
	case h[1] == sc.hash:
		return c.Thirds[0], true
	}
	// Three different hashes: no majority. The block stays unverified
	// (the job waits; see docs/ARCHITECTURE.md).
	return "", false
}

// checkCulprits returns the culprits the settled checks name.
func checkCulprits(plan *jobs.Plan, v microjob.Verdict, recs *jobRecords) []string {
	var out []string
	for _, sc := range selfChecked(plan, v) {
		if c, done := checkOutcome(recs, sc); done && c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// requestChecks writes a check for every self-checked block that has
// none, and reports whether every self-checked block is settled.
func (w *Worker) requestChecks(ctx context.Context, js *jobState, v microjob.Verdict, recs *jobRecords) (bool, error) {
	scs := selfChecked(js.plan, v)
	pending := false
	var procs []string
	for _, sc := range scs {
		if _, done := checkOutcome(recs, sc); done {
			continue
		}
		if procs == nil {
			var err error
			if procs, err = w.processors(ctx); err != nil {
				return false, err
			}
		}
		var pool []string
		for _, p := range procs {
			if p != sc.processor {
				pool = append(pool, p)
			}
		}
		if len(pool) < 2 {
			// Too few processors for an independent majority: the block
			// stands as the verifier saw it (docs/ARCHITECTURE.md).
			w.log.Warn("too few processors to check a self-checked block", "job", js.plan.JobID, "block", sc.block, "processor", sc.processor)
			continue
		}
		pending = true
		if c, ok := recs.checks[sc.block]; ok && c.Processor == sc.processor {
			continue // requested; waiting for the re-runs
		}
		// Two distinct re-runners, each a weighted draw (as a dispute's
		// third) from those not yet drawn.
		seed := dispatch.Seed(js.plan.JobID[:], []byte("check"), uint64Bytes(sc.block))
		i, ok := w.pickThird(pool, seed)
		if !ok {
			w.log.Warn("every re-runner for a self-checked block is kicked out", "job", js.plan.JobID, "block", sc.block)
			continue
		}
		first := pool[i]
		rest := slices.Delete(slices.Clone(pool), i, i+1)
		j, ok := w.pickThird(rest, dispatch.Seed(seed, []byte("second")))
		if !ok {
			w.log.Warn("every re-runner for a self-checked block is kicked out", "job", js.plan.JobID, "block", sc.block)
			continue
		}
		picks := [2]string{first, rest[j]}
		rec := Check{Block: sc.block, Processor: sc.processor, Hash: sc.hash, Thirds: picks}
		if err := crdt.PutJSON(ctx, w.writer, CheckKey(js.plan.JobID, sc.block), CheckType, rec); err != nil {
			return false, err
		}
		w.log.Info("self-checked block sent for two independent runs", "job", js.plan.JobID, "block", sc.block, "processor", sc.processor, "thirds", rec.Thirds)
	}
	return !pending, nil
}
