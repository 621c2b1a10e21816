package finish

import (
	"bytes"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
)

// FinalizerOrder ranks the processors that may finish job id: those with
// a disclosure that are not culprits, by the rendezvous hash of their peer
// ID with the job ID, highest first. The first is the designated
// finalizer. Every node computes the same order from the same records,
// and only these processors' verdicts and requests count (authors.go).
func FinalizerOrder(id jobs.ID, recs *Records, culprits []string) []string {
	type ranked struct {
		p string
		h [32]byte
	}
	var rs []ranked
	seen := map[string]bool{}
	for _, d := range recs.Discl {
		p := d.Processor
		if seen[p] || slices.Contains(culprits, p) {
			continue
		}
		seen[p] = true
		rs = append(rs, ranked{p, Rank(id, p)})
	}
	slices.SortFunc(rs, func(a, b ranked) int { return bytes.Compare(b.h[:], a.h[:]) })
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
