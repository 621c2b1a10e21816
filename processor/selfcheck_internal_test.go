package processor

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
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
	ver := (*m.Verifier())
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
	if scs := finish.SelfChecked(plan, v); slices.ContainsFunc(scs, func(sc finish.SelfCheck) bool { return sc.Block == block }) {
		t.Fatalf("block %d is still self-checked with independent results: %v", block, scs)
	}
	recs := finish.NewRecords()
	sum := func(h string) [32]byte { return sha256.Sum256([]byte(h)) }
	hexOf := func(h string) string { s := sum(h); return hex.EncodeToString(s[:]) }
	disclose := func(mu jobs.MicroJob, p, h string) microjob.Disclosure {
		d := microjob.Disclosure{MicroID: mu.ID, Processor: p, BlockIndices: mu.Blocks}
		for _, b := range mu.Blocks {
			if b == block {
				d.BlockHashes = append(d.BlockHashes, sum(h))
			} else {
				d.BlockHashes = append(d.BlockHashes, sum("good"))
			}
		}
		return d
	}
	recs.Discl = []microjob.Disclosure{disclose(ver, "liar", "bad"), disclose(regular, "liar", "bad"),
		disclose(ver, "honest1", "good"), disclose(regular, "honest2", "good")}
	// Three re-runners drain the pool and outvote the liar 3 to 1.
	recs.Checks[block] = records.Check{Block: block, Processor: "liar", Hash: hexOf("bad"), Thirds: [2]string{"honest1", "honest2"}, More: []string{"honest3"}, Exhausted: true}
	recs.Reruns[block] = []records.Rerun{{Block: block, Hash: hexOf("good"), Processor: "honest1"}, {Block: block, Hash: hexOf("good"), Processor: "honest2"},
		{Block: block, Hash: hexOf("good"), Processor: "honest3"}}
	if got := finish.CheckCulprits(plan, v, recs); !slices.Equal(got, []string{"liar"}) {
		t.Fatalf("culprits %v, want [liar]", got)
	}
	// Until every re-run is in, the check is one the verdict waits for.
	recs.Reruns[block] = recs.Reruns[block][:2]
	if got := finish.CheckCulprits(plan, v, recs); len(got) != 0 {
		t.Fatalf("an unsettled check named %v", got)
	}
	if ts := finish.CheckTargets(plan, v, recs); !slices.ContainsFunc(ts, func(sc finish.SelfCheck) bool { return sc.Block == block && sc.Processor == "liar" }) {
		t.Fatalf("the pending check of block %d is not among the targets %v", block, ts)
	}

	// A check naming a hash the processor did not disclose convicts no one.
	recs.Checks[block] = records.Check{Block: block, Processor: "honest1", Hash: hexOf("bad"), Thirds: [2]string{"liar", "honest2"}}
	recs.Reruns[block] = []records.Rerun{{Block: block, Hash: hexOf("good"), Processor: "liar"}, {Block: block, Hash: hexOf("good"), Processor: "honest2"}}
	if got := finish.CheckCulprits(plan, v, recs); len(got) != 0 {
		t.Fatalf("a check of a hash honest1 never disclosed named %v", got)
	}
}

// TestChecksAheadOfTheirDisclosures: a check whose processor has no
// disclosure in the records shows a store still catching up.
func TestChecksAheadOfTheirDisclosures(t *testing.T) {
	recs := finish.NewRecords()
	recs.Checks[3] = records.Check{Block: 3, Processor: "liar"}
	recs.Checks[5] = records.Check{Block: 5, Processor: "other"}
	recs.Discl = []microjob.Disclosure{{Processor: "other"}}
	if n := finish.ChecksAhead(recs); n != 1 {
		t.Fatalf("%d checks ahead, want 1 (the liar's)", n)
	}
	recs.Discl = append(recs.Discl, microjob.Disclosure{Processor: "liar"})
	if n := finish.ChecksAhead(recs); n != 0 {
		t.Fatalf("%d checks ahead once every processor named has disclosed", n)
	}
}
