package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Plan is the slicing of one job: every MacroJob with its N+1 MicroJobs.
// It is a pure function of the JobInfo (see Slice), so every node computes
// the same Plan. A Plan is read-only after Slice returns and safe for
// concurrent readers.
type Plan struct {
	JobID     ID         // the job's ID
	DataSize  uint64     // bytes of input data
	BlockSize uint64     // bytes per block; the last block may be shorter
	NumBlocks uint64     // ceil(DataSize / BlockSize)
	Macros    []MacroJob // in MacroJob index order

	byID map[Hash]slotRef
}

type slotRef struct {
	macro uint32
	slot  uint32
}

// MacroJob is one group of regular MicroJobs plus their verifier.
type MacroJob struct {
	Index        uint64     // position in Plan.Macros
	ID           Hash       // SHA256("jobmesh/macro/v1" ‖ jobID ‖ uint64be(Index))
	Regular      int        // number of regular MicroJobs (N, or fewer in the last MacroJob)
	VerifierSlot int        // slot of the verifier MicroJob in Micros
	Micros       []MicroJob // Regular+1 MicroJobs in slot order
}

// MicroJob is one unit of work: a set of data blocks.
type MicroJob struct {
	ID       Hash          // derived from job ID, seed, MacroJob index and slot
	Macro    uint64        // MacroJob index
	Slot     int           // position among the MacroJob's MicroJobs
	Blocks   []uint64      // global block indices, ascending
	Verifier bool          // true for the verifier MicroJob
	Sources  []BlockSource // verifier only: Sources[i] holds Blocks[i] among the regular MicroJobs
}

// BlockSource locates a block inside a regular MicroJob of the same MacroJob.
type BlockSource struct {
	Slot     int `json:"slot"`     // slot of the regular MicroJob
	Position int `json:"position"` // index into that MicroJob's Blocks
}

// Slice cuts a job into MacroJobs and MicroJobs. It checks the JobInfo
// (except its deadline) and is deterministic: same JobInfo, same Plan.
//
// The derivation, per MacroJob m with stream R = NewStream(seed, m):
//
//  1. Blocks are [i·B, min((i+1)·B, size)) for i in 0..ceil(size/B)-1.
//     MacroJob m owns blocks [m·N·K, min((m+1)·N·K, blocks)), count b.
//     It has n = ceil(b/K) regular MicroJobs and a verifier of k = min(K', n)
//     blocks. Only the last MacroJob can have b < N·K: fewer regular
//     MicroJobs, the last of them short.
//  2. P = the owned block indices ascending; shuffle P with R (Fisher–Yates).
//     Regular r (0..n-1) gets P[r·K : min((r+1)·K, b)], sorted ascending.
//  3. C = [0..n-1]; shuffle C with R. The verifier draws from regulars
//     C[0..k-1], in that order: position p_j = R.Uniform(len(regular C[j]))
//     and block = regular C[j]'s block p_j. The verifier's blocks are then
//     sorted ascending (with their sources).
//  4. v = R.Uniform(n+1) is the verifier's slot. Slots below v hold regulars
//     0..v-1, slots above hold regulars v..n-1.
//  5. The MicroJob ID of slot s is microID(jobID, seed, m, s).
//
// Regular blocks are dealt from a shuffled pool so that a regular MicroJob's
// block list looks like a verifier's (scattered, ascending).
func Slice(info *JobInfo) (*Plan, error) {
	if err := errors.Join(info.validateStatic()...); err != nil {
		return nil, fmt.Errorf("slice: %w", err)
	}
	var (
		jobID    = info.ID()
		numBlk   = info.NumBlocks()
		n, k, kv = uint64(info.Slicing.MicroJobs), uint64(info.Slicing.BlocksPerMicro), uint64(info.Slicing.VerifierBlocks)
		perMacro = n * k
		numMacro = ceilDiv(numBlk, perMacro)
		numReg   = ceilDiv(numBlk, k)
	)
	p := &Plan{
		JobID:     jobID,
		DataSize:  info.Data.Size,
		BlockSize: info.Slicing.BlockSize,
		NumBlocks: numBlk,
		Macros:    make([]MacroJob, numMacro),
		byID:      make(map[Hash]slotRef, numReg+numMacro),
	}
	// One backing array each for regular blocks, verifier blocks, sources and
	// MicroJobs keeps the allocation count independent of the job size.
	regBlocks := make([]uint64, numBlk)
	verBlocks := make([]uint64, 0, numMacro*min(kv, n))
	verSources := make([]BlockSource, 0, cap(verBlocks))
	micros := make([]MicroJob, numReg+numMacro)
	order := make([]int, n)
	picks := make([]verifierPick, 0, kv)
	regular := make([][]uint64, 0, n) // by regular index, not slot; reused per MacroJob

	for m := range numMacro {
		first := m * perMacro
		b := min(perMacro, numBlk-first)
		nr := ceilDiv(b, k)
		kk := min(kv, nr)
		r := NewStream(info.Seed, m)

		pool := regBlocks[first : first+b]
		for i := range pool {
			pool[i] = first + uint64(i)
		}
		shuffle(r, pool)
		regular = regular[:0]
		for i := uint64(0); i < nr; i++ {
			blk := pool[i*k : min((i+1)*k, b)]
			slices.Sort(blk)
			regular = append(regular, blk)
		}

		order, picks = pickVerifierBlocks(r, regular, kk, order, picks)
		v := int(r.Uniform(nr + 1))

		// Sources were recorded with regular indices; turn them into slots.
		vb := len(verBlocks)
		for _, pk := range picks {
			if pk.src.Slot >= v {
				pk.src.Slot++
			}
			verBlocks = append(verBlocks, pk.block)
			verSources = append(verSources, pk.src)
		}

		mj := &p.Macros[m]
		mj.Index = m
		mj.ID = macroID(jobID, m)
		mj.Regular = int(nr)
		mj.VerifierSlot = v
		mj.Micros, micros = micros[:nr+1:nr+1], micros[nr+1:]
		for s := range mj.Micros {
			mu := &mj.Micros[s]
			mu.ID = microID(jobID, info.Seed, m, uint64(s))
			mu.Macro = m
			mu.Slot = s
			switch {
			case s < v:
				mu.Blocks = regular[s]
			case s == v:
				mu.Verifier = true
				mu.Blocks = verBlocks[vb:len(verBlocks):len(verBlocks)]
				mu.Sources = verSources[vb:len(verSources):len(verSources)]
			default:
				mu.Blocks = regular[s-1]
			}
			p.byID[mu.ID] = slotRef{macro: uint32(m), slot: uint32(s)}
		}
	}
	return p, nil
}

// verifierPick is one block of a verifier MicroJob and where it comes from.
type verifierPick struct {
	block uint64
	src   BlockSource // with the regular index as its Slot
}

// pickVerifierBlocks draws the verifier blocks of one MacroJob from r: kk of
// its regular MicroJobs in shuffled order, one block of each, sorted by
// block. order and picks are storage to reuse; it returns them resliced.
func pickVerifierBlocks(r *Stream, regular [][]uint64, kk uint64, order []int, picks []verifierPick) ([]int, []verifierPick) {
	order = order[:len(regular)]
	for i := range order {
		order[i] = i
	}
	shuffle(r, order)
	picks = picks[:0]
	for _, c := range order[:kk] {
		pos := r.Uniform(uint64(len(regular[c])))
		picks = append(picks, verifierPick{block: regular[c][pos], src: BlockSource{Slot: c, Position: int(pos)}})
	}
	slices.SortFunc(picks, func(a, b verifierPick) int { return cmp.Compare(a.block, b.block) })
	return order, picks
}

// NumMicroJobs is the number of MicroJobs, verifiers included.
func (p *Plan) NumMicroJobs() int { return len(p.byID) }

// MicroJob returns the MicroJob with the given ID, or ErrNotFound.
func (p *Plan) MicroJob(id Hash) (*MicroJob, error) {
	ref, ok := p.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: MicroJob %s", ErrNotFound, id)
	}
	return &p.Macros[ref.macro].Micros[ref.slot], nil
}

// Blocks returns the block indices of a MicroJob, ascending.
func (p *Plan) Blocks(id Hash) ([]uint64, error) {
	mu, err := p.MicroJob(id)
	if err != nil {
		return nil, err
	}
	return mu.Blocks, nil
}

// Counterpart returns, for block position pos of a verifier MicroJob, the
// regular MicroJob holding the same block and the block's position in it.
// The finalizer compares the two result hashes.
func (p *Plan) Counterpart(verifier Hash, pos int) (*MicroJob, int, error) {
	mu, err := p.MicroJob(verifier)
	if err != nil {
		return nil, 0, err
	}
	if !mu.Verifier {
		return nil, 0, fmt.Errorf("%w: MicroJob %s is not a verifier", ErrNotFound, verifier)
	}
	if pos < 0 || pos >= len(mu.Sources) {
		return nil, 0, fmt.Errorf("%w: position %d not in 0..%d", ErrNotFound, pos, len(mu.Sources)-1)
	}
	src := mu.Sources[pos]
	return &p.Macros[mu.Macro].Micros[src.Slot], src.Position, nil
}

// BlockRange returns the byte offset and length of block i.
func (p *Plan) BlockRange(i uint64) (offset, length uint64, err error) {
	if i >= p.NumBlocks {
		return 0, 0, fmt.Errorf("%w: block %d not in 0..%d", ErrNotFound, i, p.NumBlocks-1)
	}
	offset = i * p.BlockSize
	return offset, min(p.BlockSize, p.DataSize-offset), nil
}
