package finish

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
)

// Finalizers are the processors whose requests and verdict count for a
// job with culprits: those with a disclosure that are not culprits. When
// every processor that disclosed is a culprit (a lone liar ran the whole
// job), they are the processors that re-ran a block of the job and are
// not culprits: someone must be left to ask for the culprits' MicroJobs
// to be redone, and a re-runner proved it is live and follows the job.
func Finalizers(recs *Records, culprits []string) map[string]bool {
	out := map[string]bool{}
	for _, d := range recs.Discl {
		if !slices.Contains(culprits, d.Processor) {
			out[d.Processor] = true
		}
	}
	if len(out) > 0 || len(culprits) == 0 {
		return out
	}
	for _, rs := range recs.Reruns {
		for _, r := range rs {
			if !slices.Contains(culprits, r.Processor) && validHash(r.Hash) {
				out[r.Processor] = true
			}
		}
	}
	return out
}

// FinalizerOrder ranks the processors that may finish job id (Finalizers)
// by the rendezvous hash of their peer ID with the job ID, highest first.
// The first is the designated finalizer. Every node computes the same
// order from the same records, and only these processors' verdicts and
// requests count (authors.go).
func FinalizerOrder(id jobs.ID, recs *Records, culprits []string) []string {
	type ranked struct {
		p string
		h [32]byte
	}
	var rs []ranked
	for p := range Finalizers(recs, culprits) {
		rs = append(rs, ranked{p, Rank(id, p)})
	}
	slices.SortFunc(rs, func(a, b ranked) int { return cmp.Or(bytes.Compare(b.h[:], a.h[:]), cmp.Compare(a.p, b.p)) })
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.p
	}
	return out
}

// Designated is the processor expected to finish job id: the
// first of FinalizerOrder, "" when there is none.
func Designated(id jobs.ID, recs *Records, culprits []string) string {
	if order := FinalizerOrder(id, recs, culprits); len(order) > 0 {
		return order[0]
	}
	return ""
}
