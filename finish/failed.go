package finish

import (
	"slices"
	"strings"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// The failed state: a job whose code fails the same way wherever it runs
// (it does not compile, traps, exits non-zero, runs over a limit) cannot
// be verified, and is refunded instead. Each processor keeps one failure
// report per job (records.FailureReport), naming the failed MicroJob with
// the lowest ID it has met, so that processors that first ran different
// MicroJobs come to name the same one once each has run the others'.
//
// A failure stands when at least F distinct processors report the same
// MicroJob failing the same way (FailureAgreed): what a reader shows. A
// processor stands behind it, and signs its refund, only when its own run
// of that MicroJob failed the same way too (JobFailed): a processor whose
// run of it succeeded ignores the reports, so processors that write false
// reports together, however many, refund no job an honest signer can
// run. A processor that has not run a reported MicroJob yet runs it first
// (FailureChecks).

// FailedJob is a failure that stands: a MicroJob, how it failed, and the
// processors that reported it so, sorted.
type FailedJob struct {
	Micro     jobs.ID
	Failure   records.Failure
	Reporters []string
	// Stderr is the stderr excerpt of the lowest reporter's report.
	Stderr string
}

// FailureAgreed returns the failure that at least f distinct processors
// report (the same MicroJob, the same kind and exit code), the one of the
// lowest MicroJob ID when several do; ok is false when none does or f < 1.
func FailureAgreed(reports []records.Reported, f int) (FailedJob, bool) {
	return failed(reports, f, nil)
}

// JobFailed is FailureAgreed for a processor about to sign the job's
// failure: only failures its own runs met too count (own: the failures of
// its runs, by MicroJob). A MicroJob it ran with success is in no entry of
// own, so reports of it never count.
func JobFailed(reports []records.Reported, f int, own map[jobs.ID]records.Failure) (FailedJob, bool) {
	if own == nil {
		own = map[jobs.ID]records.Failure{}
	}
	return failed(reports, f, own)
}

type failKey struct {
	micro jobs.ID
	kind  string
	code  uint32
}

func failed(reports []records.Reported, f int, own map[jobs.ID]records.Failure) (FailedJob, bool) {
	if f < 1 {
		return FailedJob{}, false
	}
	groups := map[failKey][]records.Reported{}
	for _, r := range reports {
		micro, err := jobs.ParseHash(r.Report.Micro)
		if err != nil || r.Peer == "" {
			continue
		}
		k := failKey{micro, r.Report.Kind, r.Report.ExitCode}
		if !slices.ContainsFunc(groups[k], func(o records.Reported) bool { return o.Peer == r.Peer }) {
			groups[k] = append(groups[k], r)
		}
	}
	var best *FailedJob
	for k, rs := range groups {
		if len(rs) < f {
			continue
		}
		fail := records.Failure{Kind: k.kind, ExitCode: k.code}
		if own != nil {
			mine, ok := own[k.micro]
			if !ok || !mine.Same(fail) {
				continue
			}
		}
		if best != nil && !lessFail(k, failKey{best.Micro, best.Failure.Kind, best.Failure.ExitCode}) {
			continue
		}
		slices.SortFunc(rs, func(a, b records.Reported) int { return strings.Compare(a.Peer, b.Peer) })
		fj := FailedJob{Micro: k.micro, Failure: fail, Stderr: rs[0].Report.Stderr}
		for _, r := range rs {
			fj.Reporters = append(fj.Reporters, r.Peer)
		}
		fj.Failure.Stderr = fj.Stderr
		best = &fj
	}
	if best == nil {
		return FailedJob{}, false
	}
	return *best, true
}

func lessFail(a, b failKey) bool {
	if c := slices.Compare(a.micro[:], b.micro[:]); c != 0 {
		return c < 0
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.code < b.code
}

// FailureChecks are the MicroJobs that reports name and that a processor
// has not run yet (ran: the MicroJobs it ran, failed or not), lowest ID
// first: it runs them before it can stand behind a failure or ignore it.
func FailureChecks(reports []records.Reported, ran map[jobs.ID]bool) []jobs.ID {
	var out []jobs.ID
	for _, r := range reports {
		micro, err := jobs.ParseHash(r.Report.Micro)
		if err != nil || ran[micro] || slices.Contains(out, micro) {
			continue
		}
		out = append(out, micro)
	}
	slices.SortFunc(out, func(a, b jobs.ID) int { return slices.Compare(a[:], b[:]) })
	return out
}

// OwnReport is the MicroJob and failure a processor reports of a job
// (own: the failures of its runs, by MicroJob): the lowest failed
// MicroJob ID; ok is false when none of its runs failed.
func OwnReport(own map[jobs.ID]records.Failure) (jobs.ID, records.Failure, bool) {
	var micro jobs.ID
	var f records.Failure
	ok := false
	for m, g := range own {
		if !ok || slices.Compare(m[:], micro[:]) < 0 {
			micro, f, ok = m, g, true
		}
	}
	return micro, f, ok
}
