package finish

import (
	"crypto/sha256"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// ranNone says nobody ran anything.
func ranNone(jobs.ID, string) bool { return false }

// TestVerifierRunnersPutCleanProcessorsFirst: the processors that ran a
// MicroJob a verifier checks rank after every one that ran none of them,
// so the first in rank is one that does not check itself whenever there
// is one; a MacroJob whose every processor ran a checked MicroJob still
// ranks them all.
func TestVerifierRunnersPutCleanProcessorsFirst(t *testing.T) {
	plan := manyMacros(t, 20)
	procs := []string{"p1", "p2", "p3", "p4"}
	owners := make([]string, len(plan.Macros))
	id := plan.JobID.String()
	dirty := map[string]bool{"p1": true, "p3": true}
	ran := func(_ jobs.ID, p string) bool { return dirty[p] }
	for i, order := range VerifierRunners(id, plan, procs, owners, ran) {
		if len(order) != 4 || dirty[order[0]] || dirty[order[1]] || !dirty[order[2]] || !dirty[order[3]] {
			t.Fatalf("MacroJob %d ranks %v; p1 and p3 ran checked MicroJobs", i, order)
		}
	}
	all := func(jobs.ID, string) bool { return true }
	for i, order := range VerifierRunners(id, plan, procs, owners, all) {
		if len(order) != 4 {
			t.Fatalf("MacroJob %d ranks %v when everyone ran a checked MicroJob", i, order)
		}
	}
}

// TestVerifierRunners: each MacroJob ranks every processor once, its first
// owner last; the ranking does not depend on the order processors are
// listed in, and the first rank spreads over the processors.
func TestVerifierRunners(t *testing.T) {
	plan := manyMacros(t, 40)
	procs := []string{"p1", "p2", "p3", "p4", "p5"}
	owners := make([]string, len(plan.Macros))
	for i := range owners {
		owners[i] = procs[i%len(procs)]
	}
	id := plan.JobID.String()
	got := VerifierRunners(id, plan, procs, owners, ranNone)
	reversed := slices.Clone(procs)
	slices.Reverse(reversed)
	if again := VerifierRunners(id, plan, reversed, owners, ranNone); !slices.EqualFunc(got, again, slices.Equal) {
		t.Fatal("the ranking depends on the order of the processor list")
	}
	first := map[string]int{}
	for i, order := range got {
		if len(order) != len(procs) {
			t.Fatalf("MacroJob %d ranks %d of %d processors: %v", i, len(order), len(procs), order)
		}
		sorted := slices.Sorted(slices.Values(order))
		if !slices.Equal(sorted, procs) {
			t.Fatalf("MacroJob %d ranks %v", i, order)
		}
		if order[len(order)-1] != owners[i] {
			t.Fatalf("MacroJob %d: first owner %s is not last in %v", i, owners[i], order)
		}
		first[order[0]]++
	}
	if len(first) != len(procs) {
		t.Fatalf("first ranks fall on %d of %d processors: %v", len(first), len(procs), first)
	}
	// Without a named first owner (a view too young), every processor is
	// ranked all the same.
	none := VerifierRunners(id, plan, procs, make([]string, len(plan.Macros)), ranNone)
	for i, order := range none {
		if len(order) != len(procs) {
			t.Fatalf("MacroJob %d ranks %v without a first owner", i, order)
		}
	}
}

// manyMacros is the plan of a job of n MacroJobs, each of two regular
// one-block MicroJobs and a verifier.
func manyMacros(t *testing.T, n int) *jobs.Plan {
	t.Helper()
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: uint64(2 * n * 64)},
		Slicing:        jobs.Slicing{BlockSize: 64, MicroJobs: 2, BlocksPerMicro: 1},
		SeedCommitment: jobs.Seed{1},
		PriceWei:       big.NewInt(5),
		Creator:        jobs.Address{1},
		Deadline:       start.Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	plan, err := jobs.SliceChecked(info, jobs.Seed{0xc1})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Macros) != n {
		t.Fatalf("%d MacroJobs, want %d", len(plan.Macros), n)
	}
	return plan
}
