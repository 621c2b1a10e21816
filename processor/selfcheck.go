package processor

import (
	"cmp"
	"context"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
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
	if c.Exhausted {
		// Too few live processors for a majority of three: a re-run that
		// agrees confirms the block; a disagreement cannot be decided.
		agree := false
		for _, third := range c.Thirds {
			for _, rr := range recs.reruns[sc.block] {
				if rr.Processor != third {
					continue
				}
				if rr.Hash != sc.hash {
					return "", false
				}
				agree = true
			}
		}
		return "", agree
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

// checkedBlocks lists the checks in recs whose processor disclosed, in
// one of its disclosures of the job, the hash the check names for its
// block. A block stops being self-checked once another processor's result
// covers it too (a redo, or a room run that came late); the re-runs its
// check asked for still say whether the processor lied about it.
func checkedBlocks(recs *jobRecords) []selfCheck {
	var out []selfCheck
	for block, c := range recs.checks {
		if slices.ContainsFunc(recs.discl, func(d microjob.Disclosure) bool {
			pos := slices.Index(d.BlockIndices, block)
			return d.Processor == c.Processor && pos >= 0 && pos < len(d.BlockHashes) &&
				hex.EncodeToString(d.BlockHashes[pos][:]) == c.Hash
		}) {
			out = append(out, selfCheck{block: block, processor: c.Processor, hash: c.Hash})
		}
	}
	return out
}

// checksAhead counts the checks in recs whose processor has no disclosure
// in recs.
func checksAhead(recs *jobRecords) int {
	n := 0
	for _, c := range recs.checks {
		if !slices.ContainsFunc(recs.discl, func(d microjob.Disclosure) bool { return d.Processor == c.Processor }) {
			n++
		}
	}
	return n
}

// checkTargets lists, by block, the verdict's self-checked blocks and the
// other checks whose processor disclosed the hash they name
// (checkedBlocks): the checks a verdict waits for and that name culprits.
func checkTargets(plan *jobs.Plan, v microjob.Verdict, recs *jobRecords) []selfCheck {
	out := selfChecked(plan, v)
	for _, sc := range checkedBlocks(recs) {
		if !slices.ContainsFunc(out, func(o selfCheck) bool { return o.block == sc.block && o.processor == sc.processor }) {
			out = append(out, sc)
		}
	}
	slices.SortFunc(out, func(a, b selfCheck) int {
		return cmp.Or(cmp.Compare(a.block, b.block), cmp.Compare(a.processor, b.processor))
	})
	return out
}

// checkCulprits returns the culprits the settled checks name
// (checkTargets).
func checkCulprits(plan *jobs.Plan, v microjob.Verdict, recs *jobRecords) []string {
	var out []string
	for _, sc := range checkTargets(plan, v, recs) {
		if c, done := checkOutcome(recs, sc); done && c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// checksPending reports whether a check target of v is not settled.
func checksPending(plan *jobs.Plan, v microjob.Verdict, recs *jobRecords) bool {
	return slices.ContainsFunc(checkTargets(plan, v, recs), func(sc selfCheck) bool {
		_, done := checkOutcome(recs, sc)
		return !done
	})
}

// checksSettled reports whether every check target of v (checkTargets) is
// settled, or cannot be checked for want of two processors other than the
// checked one among procs: what a finalizer waits for before it writes a
// verdict (requestChecks), so what a reader requires of one.
func checksSettled(plan *jobs.Plan, v microjob.Verdict, recs *jobRecords, procs []string) bool {
	for _, sc := range checkTargets(plan, v, recs) {
		if _, done := checkOutcome(recs, sc); done {
			continue
		}
		others := 0
		for _, p := range procs {
			if p != sc.processor {
				others++
			}
		}
		if others >= 2 {
			return false
		}
	}
	return true
}

// requestChecks writes a check for every self-checked block that has
// none, and reports whether every check target (checkTargets: the
// self-checked blocks and the checks still convicting) is settled.
func (w *Worker) requestChecks(ctx context.Context, js *jobState, v microjob.Verdict, recs *jobRecords) (bool, error) {
	scs := checkTargets(js.plan, v, recs)
	pending := false
	var checks []crdt.Entry
	var sent []records.Check
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
		c, requested := recs.checks[sc.block]
		requested = requested && c.Processor == sc.processor
		var keep, dropped []string
		if requested {
			// Waiting for the re-runs; re-runners that do not answer in
			// time are replaced.
			var silent []string
			for _, third := range c.Thirds {
				if hasRerun(recs, sc.block, third) {
					keep = append(keep, third)
				} else {
					silent = append(silent, third)
				}
			}
			if len(silent) == 0 || !w.rerunOverdue(js, "check", sc.block, c.Thirds[:]) {
				continue
			}
			dropped = append(slices.Clone(c.Dropped), silent...)
			w.log.Warn("re-runners of a self-checked block did not answer; drawing others", "job", js.plan.JobID, "block", sc.block, "silent", silent)
		}
		pool = slices.DeleteFunc(pool, func(p string) bool { return slices.Contains(dropped, p) || slices.Contains(keep, p) })
		// Re-runners are weighted draws (as a dispute's third) from those
		// not drawn yet.
		seed := dispatch.Seed(js.plan.JobID[:], []byte("check"), uint64Bytes(sc.block), uint64Bytes(uint64(len(dropped))))
		picks := slices.Clone(keep)
		for len(picks) < 2 {
			i, ok := w.pickThird(js, pool, dispatch.Seed(seed, uint64Bytes(uint64(len(picks)))))
			if !ok {
				break
			}
			picks = append(picks, pool[i])
			pool = slices.Delete(pool, i, i+1)
		}
		exhausted := len(picks) < 2
		if exhausted {
			if !requested || c.Exhausted {
				w.log.Warn("no processors left to re-run a self-checked block", "job", js.plan.JobID, "block", sc.block)
				w.judgeAgain(js)
				continue
			}
			// Keep the silent one named; the answers that came decide.
			w.log.Warn("no processors left to replace a silent re-runner; the re-runs in hand decide", "job", js.plan.JobID, "block", sc.block)
			picks = c.Thirds[:]
		}
		rec := records.Check{Block: sc.block, Processor: sc.processor, Hash: sc.hash, Thirds: [2]string{picks[0], picks[1]}, Dropped: dropped, Exhausted: exhausted}
		e, err := crdt.JSONEntry(records.CheckKey(js.plan.JobID, sc.block, w.self), records.CheckType, rec)
		if err != nil {
			return false, err
		}
		checks = append(checks, e)
		sent = append(sent, rec)
	}
	// Every request of this judgement goes out as one store batch.
	if len(checks) > 0 {
		if err := w.writer.PutBatch(ctx, checks); err != nil {
			return false, err
		}
		for _, rec := range sent {
			w.log.Info("self-checked block sent for two independent runs", "job", js.plan.JobID, "block", rec.Block, "processor", rec.Processor, "thirds", rec.Thirds)
		}
	}
	return !pending, nil
}

// hasRerun reports whether processor has stored its re-run of block.
func hasRerun(recs *jobRecords, block uint64, processor string) bool {
	return slices.ContainsFunc(recs.reruns[block], func(r records.Rerun) bool { return r.Processor == processor })
}

// rerunOverdue reports whether the re-run request (kind, block, thirds)
// has waited longer than Config.RerunTimeout since this node first saw it.
func (w *Worker) rerunOverdue(js *jobState, kind string, block uint64, thirds []string) bool {
	key := kind + "/" + strconv.FormatUint(block, 10) + "/" + strings.Join(thirds, ",")
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.rerunSeen == nil {
		js.rerunSeen = map[string]time.Time{}
	}
	seen, ok := js.rerunSeen[key]
	if !ok {
		js.rerunSeen[key] = now
		seen = now
	}
	if now.Sub(seen) < w.cfg.RerunTimeout {
		js.graceWait = true // judge again when it is overdue
		return false
	}
	return true
}
