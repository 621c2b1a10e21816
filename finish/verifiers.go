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
// the ones that ran the regular MicroJobs it takes blocks from runs it.
// A verifier exists only once the checks are drawn, after every regular
// MicroJob is committed (jobs.Plan.WithChecks), so who ran what is known
// when its runners are ranked, but for duplicate runs whose commitments
// come later (the ranks are derived again as they come), and the ranking
// puts first the processors that ran none of the MicroJobs it checks. Within each part processors
// are ranked by rendezvous hash of (peer ID, job ID, MacroJob index,
// "verifier", check seed), so nobody knows the runner before the checks
// are drawn, and the MacroJob's first owner goes last. The first in rank
// runs it at once, outside any room, and the k-th only after k
// ProcessingTimeouts without a commitment of it (stored, or heard on the
// Job channel). Its commitment and disclosure are those of any MicroJob.
// Nothing in verification trusts this choice: when one processor still
// ran both, the block is self-checked (selfcheck.go).

// VerifierRunners ranks, for each MacroJob of plan (job id), the
// processors procs for its verifier MicroJob: first those that ran
// (ran(MicroJob, processor)) none of the MicroJobs it checks, then the
// others, each part by rendezvous hash with the MacroJob's first owner
// (owners, "" when none is named yet) last. A plan without checks has no
// verifiers to rank: nil.
func VerifierRunners(id string, plan *jobs.Plan, procs, owners []string, ran func(jobs.ID, string) bool) [][]string {
	if !plan.Checked() {
		return nil
	}
	type ranked struct {
		p     string
		dirty bool
		owner bool
		h     [32]byte
	}
	out := make([][]string, len(plan.Macros))
	rs := make([]ranked, 0, len(procs))
	for i, m := range plan.Macros {
		rs = rs[:0]
		idx := strconv.FormatUint(m.Index, 10)
		ver := m.Verifier()
		for _, p := range procs {
			dirty := slices.ContainsFunc(ver.Sources, func(src jobs.BlockSource) bool { return ran(m.Micros[src.Slot].ID, p) })
			rs = append(rs, ranked{p, dirty, p == owners[i], records.RankHash(p, id, idx, "verifier", plan.CheckSeed.String())})
		}
		slices.SortFunc(rs, func(a, b ranked) int {
			switch {
			case a.dirty != b.dirty:
				return boolOrder(a.dirty)
			case a.owner != b.owner:
				return boolOrder(a.owner)
			}
			return bytes.Compare(b.h[:], a.h[:])
		})
		order := make([]string, 0, len(rs))
		for _, r := range rs {
			order = append(order, r.p)
		}
		out[i] = order
	}
	return out
}

// boolOrder orders false before true.
func boolOrder(a bool) int {
	if a {
		return 1
	}
	return -1
}

// DueVerifiers lists, in MacroJob order and at most limit of them, the
// verifier MicroJobs of plan that are self's to run after since on the
// job: those without a commitment (done) for which self is k-th in ranks
// (VerifierRunners) and since is at least k × takeover.
func DueVerifiers(plan *jobs.Plan, ranks [][]string, self string, done func(jobs.ID) bool, since, takeover time.Duration, limit int) []jobs.ID {
	var out []jobs.ID
	for i := range plan.Macros {
		if i >= len(ranks) || len(out) == limit {
			break
		}
		ver := plan.Macros[i].Verifier()
		if ver == nil || done(ver.ID) {
			continue
		}
		if k := slices.Index(ranks[i], self); k < 0 || since < time.Duration(k)*takeover {
			continue
		}
		out = append(out, ver.ID)
	}
	return out
}
