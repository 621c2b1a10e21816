package jobs

import (
	"math/big"
	"testing"
)

// TestShapeOfMatchesSlice: the closed form counts what Slice builds.
func TestShapeOfMatchesSlice(t *testing.T) {
	cases := []struct {
		size uint64
		sl   Slicing
		r    uint32
	}{
		{19 << 10, Slicing{BlockSize: 3}, 1},
		{1000, Slicing{BlockSize: 64, MicroJobs: 3, BlocksPerMicro: 3, VerifierBlocks: 2}, 2},
		{1, Slicing{BlockSize: 4096}, 1},
		{100 << 10, Slicing{BlockSize: 1000, MicroJobs: 7, BlocksPerMicro: 4}, 3},
	}
	for _, tc := range cases {
		info := &JobInfo{
			Code: Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: Hash{1}},
			Data: Data{Source: Source{URI: "https://example.org/d", SHA256: Hash{2}}, Size: tc.size}, Slicing: tc.sl,
			SeedCommitment: Seed{3}, PriceWei: big.NewInt(1), Creator: Address{4}, Deadline: 1,
			Requirements: Requirements{Replicas: tc.r},
		}
		info.ApplyDefaults()
		p, err := Slice(info)
		if err != nil {
			t.Fatal(err)
		}
		got := ShapeOf(tc.size, tc.sl, tc.r)
		regular := 0
		for _, m := range p.Macros {
			regular += m.Regular
		}
		if got.Blocks != p.NumBlocks || got.MacroJobs != uint64(len(p.Macros)) || got.Regular != uint64(regular) ||
			got.MicroJobs() != uint64(p.NumWithChecks()) || got.Runs != got.MicroJobs()*uint64(info.Requirements.Replicas) {
			t.Fatalf("size %d %+v: shape %+v, plan %d blocks %d macros %d regular %d with checks",
				tc.size, tc.sl, got, p.NumBlocks, len(p.Macros), regular, p.NumWithChecks())
		}
	}
	if s := ShapeOf(19<<10, Slicing{BlockSize: 3}, 0); s.MicroJobs() != 649+65 { // 6486 blocks, 10 per MicroJob, 100 per MacroJob
		t.Fatalf("19 KiB in 3-byte blocks: %d MicroJobs", s.MicroJobs())
	}
}
