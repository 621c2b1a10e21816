package jobs

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Plan is the slicing of one job. Slice gives its public part, a pure
// function of the JobInfo that every node computes alike: every MacroJob
// with its regular MicroJobs. WithChecks adds to each MacroJob its verifier
// MicroJob, drawn from a check seed that the processors learn only after
// every regular MicroJob is committed. A Plan is read-only once built and
// safe for concurrent readers.
type Plan struct {
	JobID     ID         // the job's ID
	DataSize  uint64     // bytes of input data
	BlockSize uint64     // bytes per block; the last block may be shorter
	NumBlocks uint64     // ceil(DataSize / BlockSize)
	Macros    []MacroJob // in MacroJob index order

	// CheckSeed is the seed the verifiers were drawn from; zero in a
	// public plan (Checked reports which).
	CheckSeed Seed

	verifierBlocks uint64 // K'
	byID           map[Hash]slotRef
}

type slotRef struct {
	macro uint32
	slot  uint32
}

// MacroJob is one group of regular MicroJobs plus, once checks are drawn,
// their verifier.
type MacroJob struct {
	Index   uint64     // position in Plan.Macros
	ID      Hash       // SHA256("jobmesh/macro/v1" ‖ jobID ‖ uint64be(Index))
	Regular int        // number of regular MicroJobs (N, or fewer in the last MacroJob)
	Micros  []MicroJob // the Regular regular MicroJobs in slot order, then the verifier once drawn
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

// Slice cuts a job into MacroJobs and regular MicroJobs: the public plan.
// It checks the JobInfo (except its deadline) and is deterministic: same
// JobInfo, same Plan. With c the JobInfo's seed commitment, per MacroJob m
// with stream R = NewStream(c, m):
//
//  1. Blocks are [i·B, min((i+1)·B, size)) for i in 0..ceil(size/B)-1.
//     MacroJob m owns blocks [m·N·K, min((m+1)·N·K, blocks)), count b.
//     It has n = ceil(b/K) regular MicroJobs. Only the last MacroJob can
//     have b < N·K: fewer regular MicroJobs, the last of them short.
//  2. P = the owned block indices ascending; shuffle P with R (Fisher–Yates).
//     Regular r (0..n-1) has slot r and the blocks P[r·K : min((r+1)·K, b)],
//     sorted ascending.
//  3. The MicroJob ID of slot s is microID(jobID, c, m, s).
//
// The plan names no verifier: nothing in it tells which blocks will be
// checked (WithChecks).
func Slice(info *JobInfo) (*Plan, error) {
	if err := errors.Join(info.validateStatic()...); err != nil {
		return nil, fmt.Errorf("slice: %w", err)
	}
	var (
		jobID    = info.ID()
		numBlk   = info.NumBlocks()
		n, k     = uint64(info.Slicing.MicroJobs), uint64(info.Slicing.BlocksPerMicro)
		perMacro = n * k
		numMacro = ceilDiv(numBlk, perMacro)
		numReg   = ceilDiv(numBlk, k)
	)
	p := &Plan{
		JobID:          jobID,
		DataSize:       info.Data.Size,
		BlockSize:      info.Slicing.BlockSize,
		NumBlocks:      numBlk,
		Macros:         make([]MacroJob, numMacro),
		verifierBlocks: uint64(info.Slicing.VerifierBlocks),
		byID:           make(map[Hash]slotRef, numReg),
	}
	// One backing array each for blocks and MicroJobs keeps the allocation
	// count independent of the job size.
	regBlocks := make([]uint64, numBlk)
	micros := make([]MicroJob, numReg)
	for m := range numMacro {
		first := m * perMacro
		b := min(perMacro, numBlk-first)
		nr := ceilDiv(b, k)
		r := NewStream(info.SeedCommitment, m)

		pool := regBlocks[first : first+b]
		for i := range pool {
			pool[i] = first + uint64(i)
		}
		shuffle(r, pool)

		mj := &p.Macros[m]
		mj.Index = m
		mj.ID = macroID(jobID, m)
		mj.Regular = int(nr)
		mj.Micros, micros = micros[:nr:nr], micros[nr:]
		for s := range mj.Micros {
			blk := pool[uint64(s)*k : min(uint64(s+1)*k, b)]
			slices.Sort(blk)
			mu := &mj.Micros[s]
			mu.ID = microID(jobID, info.SeedCommitment, m, uint64(s))
			mu.Macro = m
			mu.Slot = s
			mu.Blocks = blk
			p.byID[mu.ID] = slotRef{macro: uint32(m), slot: uint32(s)}
		}
	}
	return p, nil
}

// SliceChecked is Slice followed by WithChecks(s): the whole plan of a job
// whose check seed is known.
func SliceChecked(info *JobInfo, s Seed) (*Plan, error) {
	p, err := Slice(info)
	if err != nil {
		return nil, err
	}
	return p.WithChecks(s)
}

// Checked reports whether p has its verifiers (WithChecks).
func (p *Plan) Checked() bool { return !p.CheckSeed.IsZero() }

// Verifier returns MacroJob m's verifier MicroJob, or nil in a public plan.
func (m *MacroJob) Verifier() *MicroJob {
	if len(m.Micros) > m.Regular {
		return &m.Micros[m.Regular]
	}
	return nil
}

// WithChecks returns p with a verifier MicroJob added to every MacroJob,
// drawn from the check seed s (not zero): per MacroJob m with n regular
// MicroJobs, with the check stream Q = NewCheckStream(s, m):
//
//  1. C = [0..n-1]; shuffle C with Q. The verifier checks k = min(K', n)
//     regulars, C[0..k-1] in that order: position p_j =
//     Q.Uniform(len(regular C[j])), block = regular C[j]'s block p_j.
//     Its blocks are then sorted ascending (with their sources).
//  2. The verifier has slot n and the ID microID(jobID, s, m, n): a
//     verifier drawn from another seed is another MicroJob.
//
// p is not changed; the result shares p's regular MicroJobs.
func (p *Plan) WithChecks(s Seed) (*Plan, error) {
	if s.IsZero() {
		return nil, fmt.Errorf("%w: zero check seed", ErrMissingSeed)
	}
	if p.Checked() {
		return nil, fmt.Errorf("%w: plan of job %s already has checks", ErrInvalidSlicing, p.JobID)
	}
	out := *p
	out.CheckSeed = s
	out.Macros = make([]MacroJob, len(p.Macros))
	out.byID = make(map[Hash]slotRef, len(p.byID)+len(p.Macros))
	maps.Copy(out.byID, p.byID)
	var (
		order []int
		picks []verifierPick
	)
	for m := range p.Macros {
		mj := p.Macros[m]
		regular := mj.Micros[:mj.Regular]
		order, picks = pickVerifierBlocks(NewCheckStream(s, uint64(m)), regular, min(p.verifierBlocks, uint64(len(regular))), order, picks)
		ver := MicroJob{
			ID: microID(p.JobID, s, uint64(m), uint64(len(regular))), Macro: uint64(m), Slot: len(regular), Verifier: true,
			Blocks: make([]uint64, len(picks)), Sources: make([]BlockSource, len(picks)),
		}
		for i, pk := range picks {
			ver.Blocks[i], ver.Sources[i] = pk.block, pk.src
		}
		mj.Micros = append(slices.Clip(regular), ver)
		out.Macros[m] = mj
		out.byID[ver.ID] = slotRef{macro: uint32(m), slot: uint32(ver.Slot)}
	}
	return &out, nil
}

// verifierPick is one block of a verifier MicroJob and where it comes from.
type verifierPick struct {
	block uint64
	src   BlockSource
}

// pickVerifierBlocks draws the verifier blocks of one MacroJob from q: kk of
// its regular MicroJobs in shuffled order, one block each, sorted by block.
// order and picks are storage to reuse; it returns them resliced.
func pickVerifierBlocks(q *Stream, regular []MicroJob, kk uint64, order []int, picks []verifierPick) ([]int, []verifierPick) {
	order = order[:0]
	for i := range regular {
		order = append(order, i)
	}
	shuffle(q, order)
	picks = picks[:0]
	for _, c := range order[:kk] {
		pos := q.Uniform(uint64(len(regular[c].Blocks)))
		picks = append(picks, verifierPick{block: regular[c].Blocks[pos], src: BlockSource{Slot: c, Position: int(pos)}})
	}
	slices.SortFunc(picks, func(a, b verifierPick) int { return cmp.Compare(a.block, b.block) })
	return order, picks
}

// NumWithChecks is the number of MicroJobs the job has once its checks
// are drawn: its regular MicroJobs and one verifier per MacroJob.
func (p *Plan) NumWithChecks() int {
	if p.Checked() {
		return len(p.byID)
	}
	return len(p.byID) + len(p.Macros)
}

// NumMicroJobs is the number of MicroJobs, verifiers included once drawn.
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
