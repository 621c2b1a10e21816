package finish

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// A verifier MicroJob proves something only when a processor other than
// the ones that ran the regular MicroJobs it takes blocks from runs it. A
// MacroJob's room is usually worked by the processor that opened it, and
// often by it alone; with the verifier in the room, that processor ran
// both, and every such block had to be self-checked: two more runs, two
// more records and a wait at the end of the job (selfcheck.go).
//
// So the verifier MicroJob of a job that is not replicated is not in its
// MacroJob's room. It exists only once the checks are drawn (after every
// regular MicroJob is committed, jobs.Plan.WithChecks). Processors are
// ranked for it by rendezvous hash of (peer ID, job ID, MacroJob index,
// "verifier", check seed), so nobody knows its runner before the checks
// are drawn, among the processors
// eligible for the job, with the MacroJob's first owner last; the first in
// rank runs it at once, outside any room, and the k-th only after k
// ProcessingTimeouts without a commitment of it (stored, or heard on the
// Job channel). Its commitment and disclosure are those of any MicroJob.
// A processor that already ran a regular MicroJob the verifier checks
// passes its turn until the last in rank's is due. Nothing in verification
// trusts this choice: when one processor still ran both, the block is
// self-checked as before.

// VerifierRunners ranks, for each MacroJob of plan (job id), the
// processors procs for its verifier MicroJob: by rendezvous hash, with the
// MacroJob's first owner (owners, "" when none is named yet) last. A plan
// without checks has no verifiers to rank: nil.
func VerifierRunners(id string, plan *jobs.Plan, procs, owners []string) [][]string {
	if !plan.Checked() {
		return nil
	}
	type ranked struct {
		p string
		h [32]byte
	}
	out := make([][]string, len(plan.Macros))
	rs := make([]ranked, 0, len(procs))
	for i, m := range plan.Macros {
		rs = rs[:0]
		idx := strconv.FormatUint(m.Index, 10)
		for _, p := range procs {
			if p != owners[i] {
				rs = append(rs, ranked{p, records.RankHash(p, id, idx, "verifier", plan.CheckSeed.String())})
			}
		}
		slices.SortFunc(rs, func(a, b ranked) int { return bytes.Compare(b.h[:], a.h[:]) })
		order := make([]string, 0, len(rs)+1)
		for _, r := range rs {
			order = append(order, r.p)
		}
		if owners[i] != "" {
			order = append(order, owners[i])
		}
		out[i] = order
	}
	return out
}

// DueVerifiers lists, in MacroJob order and at most limit of them, the
// verifier MicroJobs of plan that are self's to run after since on the
// job: those without a commitment (done) for which self is k-th in ranks
// (VerifierRunners) and since is at least k × takeover. A processor that
// ran (ran) a regular MicroJob a verifier takes a block from passes its
// turn until the last in rank's is due: those after it may be gone.
func DueVerifiers(plan *jobs.Plan, ranks [][]string, self string, done, ran func(jobs.ID) bool, since, takeover time.Duration, limit int) []jobs.ID {
	var out []jobs.ID
	for i := range plan.Macros {
		if i >= len(ranks) || len(out) == limit {
			break
		}
		m := &plan.Macros[i]
		ver := m.Verifier()
		if ver == nil || done(ver.ID) {
			continue
		}
		k := slices.Index(ranks[i], self)
		if k < 0 || since < time.Duration(k)*takeover {
			continue
		}
		last := len(ranks[i]) - 1
		if k < last && since < time.Duration(last)*takeover && slices.ContainsFunc(ver.Sources, func(src jobs.BlockSource) bool { return ran(m.Micros[src.Slot].ID) }) {
			continue
		}
		out = append(out, ver.ID)
	}
	return out
}
