package jobs

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"testing"
)

// sliceJob returns a valid job with the given data size and slicing.
func sliceJob(size, blockSize uint64, n, k, kv uint32) *JobInfo {
	j := validJob()
	j.Data.Size = size
	j.Slicing = Slicing{BlockSize: blockSize, MicroJobs: n, BlocksPerMicro: k, VerifierBlocks: kv}
	return j
}

// testSecret is the check seed tests draw verifiers from.
var testSecret = goldenSecret

// sliceChecked returns info's plan with checks drawn from testSecret.
func sliceChecked(t testing.TB, info *JobInfo) *Plan {
	t.Helper()
	public, err := Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	p, err := public.WithChecks(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkPlan asserts every invariant of a checked Plan against its JobInfo.
func checkPlan(t *testing.T, info *JobInfo, p *Plan) {
	t.Helper()
	n, k, kv := uint64(info.Slicing.MicroJobs), uint64(info.Slicing.BlocksPerMicro), uint64(info.Slicing.VerifierBlocks)
	numBlocks := (info.Data.Size + info.Slicing.BlockSize - 1) / info.Slicing.BlockSize
	if p.NumBlocks != numBlocks {
		t.Fatalf("NumBlocks = %d, want %d", p.NumBlocks, numBlocks)
	}
	if want := (numBlocks + n*k - 1) / (n * k); uint64(len(p.Macros)) != want {
		t.Fatalf("%d MacroJobs, want %d", len(p.Macros), want)
	}
	checkBlockRanges(t, info, p)

	seenBlock := make([]int, numBlocks)
	ids := map[Hash]bool{}
	total := 0
	for mi, m := range p.Macros {
		if m.Index != uint64(mi) {
			t.Fatalf("macro %d has Index %d", mi, m.Index)
		}
		if ids[m.ID] {
			t.Fatalf("duplicate MacroJob ID %s", m.ID)
		}
		ids[m.ID] = true
		first := uint64(mi) * n * k
		b := min(n*k, numBlocks-first)
		wantRegular := int((b + k - 1) / k)
		if m.Regular != wantRegular || len(m.Micros) != wantRegular+1 {
			t.Fatalf("macro %d: %d regular, %d micros; want %d regular", mi, m.Regular, len(m.Micros), wantRegular)
		}
		if mi < len(p.Macros)-1 && m.Regular != int(n) {
			t.Fatalf("macro %d is not the last but has %d regular MicroJobs", mi, m.Regular)
		}
		short := 0
		for s, mu := range m.Micros {
			total++
			if ids[mu.ID] {
				t.Fatalf("duplicate MicroJob ID %s", mu.ID)
			}
			ids[mu.ID] = true
			if mu.Slot != s || mu.Macro != uint64(mi) || mu.Verifier != (s == m.Regular) {
				t.Fatalf("macro %d slot %d: bad header %+v", mi, s, mu)
			}
			got, err := p.MicroJob(mu.ID)
			if err != nil || got != &m.Micros[s] {
				t.Fatalf("MicroJob(%s) = %p, %v", mu.ID, got, err)
			}
			for i := 1; i < len(mu.Blocks); i++ {
				if mu.Blocks[i-1] >= mu.Blocks[i] {
					t.Fatalf("macro %d slot %d: blocks not strictly ascending: %v", mi, s, mu.Blocks)
				}
			}
			for _, blk := range mu.Blocks {
				if blk < first || blk >= first+b {
					t.Fatalf("macro %d slot %d: block %d outside [%d,%d)", mi, s, blk, first, first+b)
				}
			}
			if mu.Verifier {
				continue
			}
			if len(mu.Sources) != 0 {
				t.Fatalf("regular MicroJob has sources")
			}
			switch {
			case uint64(len(mu.Blocks)) == k:
			case len(mu.Blocks) > 0 && uint64(len(mu.Blocks)) < k:
				short++
			default:
				t.Fatalf("macro %d slot %d: %d blocks, K=%d", mi, s, len(mu.Blocks), k)
			}
			for _, blk := range mu.Blocks {
				seenBlock[blk]++
			}
		}
		if short > 1 || (short == 1 && (mi != len(p.Macros)-1 || b%k == 0)) {
			t.Fatalf("macro %d: %d short regular MicroJobs", mi, short)
		}

		checkVerifier(t, p, mi, kv)
	}
	for blk, c := range seenBlock {
		if c != 1 {
			t.Fatalf("block %d is in %d regular MicroJobs, want 1", blk, c)
		}
	}
	if p.NumMicroJobs() != total {
		t.Fatalf("NumMicroJobs = %d, want %d", p.NumMicroJobs(), total)
	}
}

// checkVerifier checks the verifier of MacroJob mi: min(K', regular)
// blocks, each from a different regular MicroJob, each its counterpart's.
func checkVerifier(t *testing.T, p *Plan, mi int, kv uint64) {
	t.Helper()
	m := &p.Macros[mi]
	v := m.Verifier()
	if want := min(kv, uint64(m.Regular)); uint64(len(v.Blocks)) != want || len(v.Sources) != len(v.Blocks) {
		t.Fatalf("macro %d: verifier has %d blocks, %d sources; want %d", mi, len(v.Blocks), len(v.Sources), want)
	}
	srcSlots := map[int]bool{}
	for i, src := range v.Sources {
		if srcSlots[src.Slot] {
			t.Fatalf("macro %d: two verifier blocks from slot %d", mi, src.Slot)
		}
		srcSlots[src.Slot] = true
		reg, pos, err := p.Counterpart(v.ID, i)
		if err != nil || reg.Verifier || reg.Slot != src.Slot || pos != src.Position {
			t.Fatalf("Counterpart(%d) = %+v, %d, %v", i, reg, pos, err)
		}
		if reg.Blocks[pos] != v.Blocks[i] {
			t.Fatalf("verifier block %d is %d, counterpart holds %d", i, v.Blocks[i], reg.Blocks[pos])
		}
	}
}

// checkBlockRanges checks that the blocks' byte ranges cover the data.
func checkBlockRanges(t *testing.T, info *JobInfo, p *Plan) {
	t.Helper()
	var covered uint64
	for i := range p.NumBlocks {
		_, l, err := p.BlockRange(i)
		if err != nil || l == 0 || l > p.BlockSize {
			t.Fatalf("BlockRange(%d) = %d, %v", i, l, err)
		}
		covered += l
	}
	if covered != info.Data.Size {
		t.Fatalf("blocks cover %d bytes, want %d", covered, info.Data.Size)
	}
}

func TestSliceProperties(t *testing.T) {
	cases := []struct {
		size, bs uint64
		n, k, kv uint32
	}{
		{1, 1, 1, 1, 1},                // one block
		{1000, 64, 3, 3, 2},            // short last block, short last MacroJob
		{9 * 64, 64, 3, 3, 3},          // exactly one full MacroJob
		{10 * 64, 64, 3, 3, 3},         // last MacroJob has one block
		{1 << 20, 4096, 10, 10, 10},    // defaults, 256 blocks
		{12345, 7, 7, 5, 4},            // odd sizes
		{100000, 10, 1, 1, 1},          // N = 1
		{50000, 3, 1000, 1, 1000},      // wide MacroJobs
		{1 << 16, 1, 2, 1000, 2},       // large K
		{(1 << 16) + 1, 1, 10, 10, 10}, // one block over
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("size=%d,B=%d,N=%d,K=%d,K'=%d", c.size, c.bs, c.n, c.k, c.kv), func(t *testing.T) {
			info := sliceJob(c.size, c.bs, c.n, c.k, c.kv)
			checkPlan(t, info, sliceChecked(t, info))
		})
	}
}

func TestSliceShortLastMacroJob(t *testing.T) {
	// 16 blocks, N·K = 9: MacroJob 1 has 7 blocks, so 3 regular MicroJobs of
	// 3, 3 and 1 blocks and a verifier of min(K'=2, 3) = 2 blocks.
	p := sliceChecked(t, sliceJob(1000, 64, 3, 3, 2))
	last := p.Macros[1]
	var sizes []int
	for _, mu := range last.Micros {
		if !mu.Verifier {
			sizes = append(sizes, len(mu.Blocks))
		}
	}
	if last.Regular != 3 || len(last.Verifier().Blocks) != 2 {
		t.Fatalf("last MacroJob: %d regular, verifier %v", last.Regular, last.Verifier().Blocks)
	}
	count := map[int]int{}
	for _, s := range sizes {
		count[s]++
	}
	if count[3] != 2 || count[1] != 1 {
		t.Fatalf("regular sizes %v, want two of 3 and one of 1", sizes)
	}
	if _, l, _ := p.BlockRange(15); l != 1000-15*64 {
		t.Fatalf("last block length %d", l)
	}

	// One block left over: one regular MicroJob of one block, and a verifier
	// of min(K', 1) = 1 block that repeats it.
	p = sliceChecked(t, sliceJob(10*64, 64, 3, 3, 3))
	last = p.Macros[1]
	if last.Regular != 1 || len(last.Micros) != 2 {
		t.Fatalf("last MacroJob: %+v", last)
	}
	v := last.Micros[1]
	reg := last.Micros[0]
	if len(v.Blocks) != 1 || v.Blocks[0] != 9 || len(reg.Blocks) != 1 || reg.Blocks[0] != 9 {
		t.Fatalf("verifier %v, regular %v; want block 9 in both", v.Blocks, reg.Blocks)
	}
}

func TestSliceDeterministic(t *testing.T) {
	info := sliceJob(1<<20, 4096, 10, 10, 10)
	a, err := Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	// A node that received the job over the wire computes the same Plan.
	decoded, err := Decode(info.Encode())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Slice(decoded)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two slicings of the same job differ")
	}
}

func TestSliceSeedsDiffer(t *testing.T) {
	info := sliceJob(1<<20, 4096, 10, 10, 10)
	a := sliceChecked(t, info)
	info.SeedCommitment[0] ^= 1
	b := sliceChecked(t, info)
	sameBlocks := 0
	for i := range a.Macros {
		ma, mb := a.Macros[i], b.Macros[i]
		if ma.ID == mb.ID || ma.Micros[0].ID == mb.Micros[0].ID || ma.Verifier().ID == mb.Verifier().ID {
			t.Fatal("IDs do not depend on the job")
		}
		if reflect.DeepEqual(ma.Micros[0].Blocks, mb.Micros[0].Blocks) {
			sameBlocks++
		}
	}
	if sameBlocks > 0 {
		t.Fatalf("another commitment gives the same blocks in %d of %d MacroJobs", sameBlocks, len(a.Macros))
	}
}

// TestPublicPlanHidesChecks: the public plan names no verifier and its
// regular part does not depend on the check seed, so nothing a processor
// can compute before the reveal tells which blocks will be checked; two
// check seeds draw different verifiers over the same regular MicroJobs.
func TestPublicPlanHidesChecks(t *testing.T) {
	info := sliceJob(1<<20, 4096, 10, 10, 10)
	public, err := Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	if public.Checked() || public.NumMicroJobs() != 256/10+1 {
		t.Fatalf("public plan: checked %v, %d MicroJobs", public.Checked(), public.NumMicroJobs())
	}
	for _, m := range public.Macros {
		if m.Verifier() != nil || len(m.Micros) != m.Regular {
			t.Fatalf("macro %d of the public plan has a verifier", m.Index)
		}
	}
	a, err := public.WithChecks(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	b, err := public.WithChecks(Seed{9})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range a.Macros {
		ma, mb := a.Macros[i], b.Macros[i]
		if !reflect.DeepEqual(ma.Micros[:ma.Regular], public.Macros[i].Micros) || !reflect.DeepEqual(mb.Micros[:mb.Regular], public.Macros[i].Micros) {
			t.Fatalf("macro %d: checks changed the regular MicroJobs", i)
		}
		if ma.Verifier().ID == mb.Verifier().ID {
			t.Fatalf("macro %d: two check seeds give one verifier ID", i)
		}
		if reflect.DeepEqual(ma.Verifier().Blocks, mb.Verifier().Blocks) {
			same++
		}
	}
	if same > 1 {
		t.Fatalf("two check seeds drew the same verifier blocks in %d of %d MacroJobs", same, len(a.Macros))
	}
	if _, err := public.WithChecks(Seed{}); !errors.Is(err, ErrMissingSeed) {
		t.Fatalf("WithChecks(zero) = %v, want ErrMissingSeed", err)
	}
	if _, err := a.WithChecks(Seed{9}); !errors.Is(err, ErrInvalidSlicing) {
		t.Fatalf("WithChecks on a checked plan = %v, want ErrInvalidSlicing", err)
	}
	if _, err := public.MicroJob(a.Macros[0].Verifier().ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the public plan knows the verifier: %v", err)
	}
}

func TestCheckedBlockSpread(t *testing.T) {
	// 1200 MacroJobs of N=3, K=2, K'=1: each of the 6 (regular, position)
	// pairs should be checked about 200 times. Fixed seeds, so the counts
	// are deterministic; the bound catches a broken Uniform or an
	// off-by-one in the draw.
	p := sliceChecked(t, sliceJob(1200*6, 1, 3, 2, 1))
	var counts [3][2]int
	for _, m := range p.Macros {
		src := m.Verifier().Sources[0]
		counts[src.Slot][src.Position]++
	}
	for s, row := range counts {
		for pos, c := range row {
			if c < 130 || c > 270 {
				t.Fatalf("regular %d block %d checked %d times of 1200: %v", s, pos, c, counts)
			}
		}
	}
}

func TestCommitSeedIsKeccak(t *testing.T) {
	// keccak256 of 32 zero bytes.
	const want = "290decd9548b62a8d60345a988386fc84ba6bc95484008f6362f93160ef3e563"
	if got := CommitSeed(Seed{}).String(); got != want {
		t.Fatalf("CommitSeed(0) = %s, want %s", got, want)
	}
}

func TestSliceRejectsInvalidJob(t *testing.T) {
	info := sliceJob(1000, 0, 3, 3, 2)
	if _, err := Slice(info); !errors.Is(err, ErrInvalidSlicing) {
		t.Fatalf("Slice = %v, want ErrInvalidSlicing", err)
	}
	info = sliceJob(1000, 64, 3, 3, 2)
	info.SeedCommitment = Seed{}
	if _, err := Slice(info); !errors.Is(err, ErrMissingSeed) {
		t.Fatalf("Slice = %v, want ErrMissingSeed", err)
	}
}

func TestPlanLookupErrors(t *testing.T) {
	p := sliceChecked(t, sliceJob(1000, 64, 3, 3, 2))
	if _, err := p.MicroJob(Hash{1}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MicroJob(unknown) = %v", err)
	}
	if _, err := p.Blocks(Hash{1}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Blocks(unknown) = %v", err)
	}
	m := p.Macros[0]
	regular := m.Micros[0]
	if _, _, err := p.Counterpart(regular.ID, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Counterpart(regular) = %v", err)
	}
	if _, _, err := p.Counterpart(m.Verifier().ID, 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Counterpart(out of range) = %v", err)
	}
	if _, _, err := p.BlockRange(p.NumBlocks); !errors.Is(err, ErrNotFound) {
		t.Fatalf("BlockRange(out of range) = %v", err)
	}
	blocks, err := p.Blocks(regular.ID)
	if err != nil || !reflect.DeepEqual(blocks, regular.Blocks) {
		t.Fatalf("Blocks = %v, %v", blocks, err)
	}
}

func TestStreamMatchesSpec(t *testing.T) {
	seed := Seed(sha256.Sum256([]byte("seed")))
	const macro = 7
	s := NewStream(seed, macro)
	for counter := uint64(0); counter < 3; counter++ {
		in := append([]byte("jobmesh/slice/v1"), seed[:]...)
		in = binary.BigEndian.AppendUint64(in, macro)
		in = binary.BigEndian.AppendUint64(in, counter)
		block := sha256.Sum256(in)
		for w := 0; w < 4; w++ {
			if got, want := s.Uint64(), binary.BigEndian.Uint64(block[8*w:]); got != want {
				t.Fatalf("counter %d word %d: %x, want %x", counter, w, got, want)
			}
		}
	}
}

func TestUniformRejectsBiasedDraws(t *testing.T) {
	seed := Seed(sha256.Sum256([]byte("uniform")))
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for _, n := range []uint64{1, 2, 3, 10, 1000, 1<<63 + 1, 3 << 62, ^uint64(0)} {
		got, raw := NewStream(seed, 0), NewStream(seed, 0)
		// Reference: t = 2^64 mod n computed with big integers.
		threshold := new(big.Int).Mod(two64, new(big.Int).SetUint64(n)).Uint64()
		for i := 0; i < 200; i++ {
			var want uint64
			for {
				x := raw.Uint64()
				if x >= threshold {
					want = x % n
					break
				}
			}
			if v := got.Uniform(n); v != want || v >= n {
				t.Fatalf("n=%d draw %d: %d, want %d", n, i, v, want)
			}
		}
	}
}

func BenchmarkSlice1GiB(b *testing.B) {
	info := sliceJob(1<<30, 4096, 10, 10, 10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Slice(info); err != nil {
			b.Fatal(err)
		}
	}
}
