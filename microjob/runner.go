package microjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/wasm"
)

// BlockAdder stores block outputs; ipfs.Store satisfies it.
type BlockAdder interface {
	// AddFile imports r as a UnixFS file and returns its root CID.
	AddFile(ctx context.Context, r io.Reader) (cid.Cid, error)
	// AddDir imports a UnixFS directory of named files (name → content).
	AddDir(ctx context.Context, entries map[string][]byte) (cid.Cid, error)
}

// BlockNameWidth is the width of a block file name: the block index in
// decimal, zero-padded to 20 digits (enough for any uint64), so that name
// order is block order.
const BlockNameWidth = 20

// BlockFileName returns the name of block i's output file in a result
// directory, e.g. "00000000000000000042".
func BlockFileName(i uint64) string {
	s := strconv.FormatUint(i, 10)
	return zeros[:BlockNameWidth-len(s)] + s
}

const zeros = "00000000000000000000"

// Input is what Runner.Run needs. The caller fetched Code and Data and
// checked them against the JobInfo's hashes.
type Input struct {
	Info  *jobs.JobInfo  // the job
	Plan  *jobs.Plan     // jobs.Slice(Info)
	Micro *jobs.MicroJob // the MicroJob to run, from Plan
	Code  []byte         // the WebAssembly module
	Data  []byte         // the whole job data (Plan.DataSize bytes)
}

// Output is the result of one MicroJob.
type Output struct {
	BlockIndices []uint64   // the MicroJob's blocks, in its order
	BlockHashes  [][32]byte // SHA-256 of each block's output, same order
	ResultCID    cid.Cid    // UnixFS directory: one file per block, named BlockFileName(index)
	// Inline holds the result directory's blocks when they are small
	// enough to travel in the disclosure (Disclosure.Inline).
	Inline []blocks.Block
}

// LocalDAGReader reads a small DAG back from local storage; ipfs.Node
// satisfies it. A Runner whose Blocks satisfies it puts results of at most
// MaxInlineBytes inline in their disclosures.
type LocalDAGReader interface {
	LocalDAG(ctx context.Context, root cid.Cid, limit int) ([]blocks.Block, bool, error)
}

// Config configures a Runner.
type Config struct {
	// Exec runs one block. Required; the wazero wasm.Executor in production.
	Exec wasm.Runner
	// Blocks stores the outputs. Required; the node's ipfs.Store.
	Blocks BlockAdder
	// Logger receives progress. Default slog.Default().
	Logger *slog.Logger
	// Registerer receives the runner's metrics. Default nil (not registered).
	Registerer prometheus.Registerer
	// Tamper, when set, rewrites each block output before it is hashed and
	// stored; check says whether the run checks another's result (a
	// verifier MicroJob). It exists only as a test seam, to play a
	// dishonest processor in tests of culprit detection; it is nil in
	// production. Default nil.
	Tamper func(block uint64, check bool, out []byte) []byte
}

// DefaultConfig returns the defaults documented on Config; Exec and Blocks
// must still be set.
func DefaultConfig() Config { return Config{Logger: slog.Default()} }

// Validate checks that the required fields are set.
func (c Config) Validate() error {
	if c.Exec == nil {
		return fmt.Errorf("%w: Exec is required", ErrInvalidConfig)
	}
	if c.Blocks == nil {
		return fmt.Errorf("%w: Blocks is required", ErrInvalidConfig)
	}
	return nil
}

// Runner runs MicroJobs. It is safe for concurrent use if its Exec and
// Blocks are. It owns nothing that needs closing.
type Runner struct {
	cfg    Config
	log    *slog.Logger
	blocks prometheus.Counter
}

// NewRunner checks cfg and registers the metrics.
func NewRunner(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	r := &Runner{
		cfg: cfg,
		log: log.With("subsystem", "microjob"),
		blocks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_microjob_blocks_total", Help: "Blocks run successfully.",
		}),
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(r.blocks); err != nil {
			return nil, fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
		}
	}
	return r, nil
}

// check verifies that the input is consistent before any work is done.
func (in Input) check() error {
	switch {
	case in.Info == nil || in.Plan == nil || in.Micro == nil:
		return fmt.Errorf("%w: Info, Plan and Micro are required", ErrInvalidInput)
	case in.Info.ID() != in.Plan.JobID:
		return fmt.Errorf("%w: plan of job %s, JobInfo is job %s", ErrInvalidInput, in.Plan.JobID, in.Info.ID())
	case uint64(len(in.Data)) != in.Plan.DataSize:
		return fmt.Errorf("%w: %d bytes of data, plan wants %d", ErrInvalidInput, len(in.Data), in.Plan.DataSize)
	}
	mu, err := in.Plan.MicroJob(in.Micro.ID)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if mu.Macro != in.Micro.Macro || !equalBlocks(mu.Blocks, in.Micro.Blocks) {
		return fmt.Errorf("%w: MicroJob %s differs from the plan", ErrInvalidInput, in.Micro.ID)
	}
	return nil
}

func equalBlocks(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Run runs every block of in.Micro, in the MicroJob's order, and stores the
// outputs. The first failing block fails the MicroJob with an error that
// names the block and wraps ErrBlockFailed and the executor's sentinel.
func (r *Runner) Run(ctx context.Context, in Input) (out Output, err error) {
	if err := in.check(); err != nil {
		return Output{}, err
	}
	start := time.Now()
	log := r.log.With("job", in.Plan.JobID.String(), "macro", in.Micro.Macro, "micro", in.Micro.ID.String())
	defer func() {
		switch {
		case err == nil:
			log.Info("MicroJob done", "blocks", len(out.BlockIndices), "result", out.ResultCID.String(), "elapsed", time.Since(start))
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, wasm.ErrCanceled):
			log.Info("MicroJob canceled", "err", err)
		default:
			log.Warn("MicroJob failed", "err", err)
		}
	}()
	log.Debug("MicroJob start", "blocks", len(in.Micro.Blocks))

	n := len(in.Micro.Blocks)
	out = Output{BlockIndices: make([]uint64, n), BlockHashes: make([][32]byte, n)}
	files := make(map[string][]byte, n)
	outBytes := 0 // the result directory's DAG holds at least these bytes
	for i, b := range in.Micro.Blocks {
		if err := ctx.Err(); err != nil {
			return Output{}, fmt.Errorf("microjob %s: %w", in.Micro.ID, err)
		}
		off, length, err := in.Plan.BlockRange(b)
		if err != nil {
			return Output{}, fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
		res, err := r.cfg.Exec.Run(WithJobLimits(ctx, in.Info), in.Code, in.Data[off:off+length])
		if err != nil {
			return Output{}, fmt.Errorf("microjob %s: block %d (%d of %d): %w: %w", in.Micro.ID, b, i+1, n, ErrBlockFailed, err)
		}
		if r.cfg.Tamper != nil {
			res = r.cfg.Tamper(b, in.Micro.Verifier, bytes.Clone(res))
		}
		out.BlockIndices[i] = b
		out.BlockHashes[i] = sha256.Sum256(res)
		files[BlockFileName(b)] = res
		outBytes += len(res)
		r.blocks.Inc()
		log.Debug("block done", "block", b, "bytes", len(res))
	}
	c, err := r.cfg.Blocks.AddDir(ctx, files)
	if err != nil {
		return Output{}, fmt.Errorf("microjob %s: storing outputs: %w", in.Micro.ID, err)
	}
	out.ResultCID = c
	if lr, ok := r.cfg.Blocks.(LocalDAGReader); ok && outBytes <= MaxInlineBytes {
		bs, small, err := lr.LocalDAG(ctx, c, MaxInlineBytes)
		if err != nil {
			return Output{}, fmt.Errorf("microjob %s: reading outputs back: %w", in.Micro.ID, err)
		}
		if small && len(bs) <= MaxInlineBlocks {
			out.Inline = bs
		}
	}
	return out, nil
}

// Disclosure builds the disclosure of out for processor and wallet under
// salt; its Commitment method gives the matching commitment.
func (out Output) Disclosure(plan *jobs.Plan, micro *jobs.MicroJob, processor, wallet string, salt [32]byte) Disclosure {
	return Disclosure{
		Version:      RecordVersion,
		JobID:        plan.JobID,
		MacroIndex:   micro.Macro,
		MicroID:      micro.ID,
		Processor:    processor,
		Wallet:       wallet,
		BlockIndices: out.BlockIndices,
		BlockHashes:  out.BlockHashes,
		ResultCID:    out.ResultCID,
		Salt:         salt,
		Inline:       out.Inline,
	}
}
