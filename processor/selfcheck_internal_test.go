package processor

import (
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// TestCheckConvictsAfterTheBlockIsNoLongerSelfChecked: a liar ran both
// sides of a verifier block, a check of it was asked for, and then honest
// processors' results came to cover the block too (they redid the liar's
// MicroJobs), so the block is no longer self-checked. The two re-runs the
// check asked for still name the liar. A check whose hash the processor
// never disclosed names nobody.
func TestCheckConvictsAfterTheBlockIsNoLongerSelfChecked(t *testing.T) {
	_, plan := byteJob(t, 40, 4, jobs.Requirements{})
	m := plan.Macros[0]
	ver := m.Micros[m.VerifierSlot]
	block, src := ver.Blocks[0], ver.Sources[0]
	regular := m.Micros[src.Slot]
	hashes := func(mu jobs.MicroJob, at uint64, h string) []string {
		out := make([]string, len(mu.Blocks))
		for i, b := range mu.Blocks {
			out[i] = "good"
			if b == at {
				out[i] = h
			}
		}
		return out
	}
	result := func(mu jobs.MicroJob, p, h string) microjob.Result {
		return microjob.Result{MicroID: mu.ID.String(), Verifier: mu.Verifier, Processor: p, Hashes: hashes(mu, block, h)}
	}
	v := microjob.Verdict{Results: []microjob.Result{
		result(ver, "liar", "bad"), result(regular, "liar", "bad"),
		result(ver, "honest1", "good"), result(regular, "honest2", "good"),
	}}
	if scs := selfChecked(plan, v); slices.ContainsFunc(scs, func(sc selfCheck) bool { return sc.block == block }) {
		t.Fatalf("block %d is still self-checked with independent results: %v", block, scs)
	}
	recs := newJobRecords()
	recs.checks[block] = Check{Block: block, Processor: "liar", Hash: "bad", Thirds: [2]string{"honest1", "honest2"}}
	recs.reruns[block] = []Rerun{{Block: block, Hash: "good", Processor: "honest1"}, {Block: block, Hash: "good", Processor: "honest2"}}
	if got := checkCulprits(plan, v, recs); !slices.Equal(got, []string{"liar"}) {
		t.Fatalf("culprits %v, want [liar]", got)
	}

	// A check naming a hash the processor did not disclose convicts no one.
	recs.checks[block] = Check{Block: block, Processor: "honest1", Hash: "bad", Thirds: [2]string{"liar", "honest2"}}
	recs.reruns[block] = []Rerun{{Block: block, Hash: "good", Processor: "liar"}, {Block: block, Hash: "good", Processor: "honest2"}}
	if got := checkCulprits(plan, v, recs); len(got) != 0 {
		t.Fatalf("a check of a hash honest1 never disclosed named %v", got)
	}
}
