package microjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"

	"github.com/jobmesh/jobmesh/assemble"
	"github.com/jobmesh/jobmesh/jobs"
)

// ResultReader reads result directories; ipfs.Store satisfies it.
type ResultReader interface {
	// Cat reads a UnixFS file, fetching missing blocks from the network.
	Cat(ctx context.Context, c cid.Cid) (io.ReadCloser, error)
	// DAGService resolves directory entries.
	DAGService() ipld.DAGService
}

// OutputStore reads result directories and stores the assembled output;
// ipfs.Store satisfies it.
type OutputStore interface {
	BlockAdder
	ResultReader
}

// MaxBlockOutputBytes bounds one block output read back for assembly; it
// equals the executor's default output cap (wasm.Config.MaxOutputBytes).
const MaxBlockOutputBytes = 64 << 20

// OutputFileName returns the name of the assembled output in the job's
// output directory: "output.png" for png-grid, "output.bin" otherwise.
func OutputFileName(kind string) string {
	if kind == jobs.OutputPNGGrid {
		return "output.png"
	}
	return "output.bin"
}

// Assemble builds the job's output from a verified verdict: for every
// regular MicroJob of the plan (together they hold every block once) it
// reads each block's output from an accepted result directory, checks it
// against the disclosed hash, orders all outputs by block index, assembles
// them by the JobInfo's output kind and stores the result as a UnixFS
// directory holding one file, OutputFileName(kind). The block outputs stay
// in the MicroJobs' result directories, referenced by the verdict.
//
// If one processor's directory is unreachable or does not hold what it
// disclosed, the next non-culprit processor with the same MicroJob is tried;
// when none is left the error wraps ErrOutput and names the processor.
func Assemble(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, v Verdict, store OutputStore) (cid.Cid, error) {
	if info == nil || plan == nil || store == nil {
		return cid.Undef, fmt.Errorf("%w: JobInfo, plan and store are required", ErrPlan)
	}
	if id := info.ID(); id != plan.JobID || v.JobID != id.String() {
		return cid.Undef, fmt.Errorf("%w: JobInfo %s, plan %s, verdict %s", ErrPlan, id, plan.JobID, v.JobID)
	}
	outputs, _, err := BlockOutputs(ctx, plan, v, store)
	if err != nil {
		return cid.Undef, err
	}
	out, err := assemble.NewRegistry().Assemble(info.Output.Kind, outputs, assemble.Options{Columns: int(info.Output.Columns)})
	if err != nil {
		return cid.Undef, fmt.Errorf("microjob: assembling job %s: %w", plan.JobID, err)
	}
	c, err := store.AddDir(ctx, map[string][]byte{OutputFileName(info.Output.Kind): out})
	if err != nil {
		return cid.Undef, fmt.Errorf("microjob: storing output of job %s: %w", plan.JobID, err)
	}
	return c, nil
}

// TileMap draws the companion picture of a verified png-grid job: each
// tile filled with the colour of the processor whose result it was read
// from (assemble.TileMap, assemble.ProcessorColour). Processor i of
// processors gets colour i; with nil processors the order is the sorted
// peer IDs of the processors whose results were used. A legend under the
// tiles names each processor with its colour. It returns the picture and
// the order used, so that another legend can match the colours.
func TileMap(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, v Verdict, store ResultReader, processors []string) ([]byte, []string, error) {
	if info == nil || plan == nil || store == nil {
		return nil, nil, fmt.Errorf("%w: JobInfo, plan and store are required", ErrPlan)
	}
	if info.Output.Kind != jobs.OutputPNGGrid {
		return nil, nil, fmt.Errorf("%w: job %s assembles %q, not %q", ErrPlan, plan.JobID, info.Output.Kind, jobs.OutputPNGGrid)
	}
	outputs, from, err := BlockOutputs(ctx, plan, v, store)
	if err != nil {
		return nil, nil, err
	}
	if processors == nil {
		for _, p := range from {
			if !slices.Contains(processors, p) {
				processors = append(processors, p)
			}
		}
		slices.Sort(processors)
	}
	idx := make([]int, len(from))
	for b, p := range from {
		idx[b] = slices.Index(processors, p)
	}
	pic, err := assemble.TileMap(outputs, int(info.Output.Columns), idx, processors)
	if err != nil {
		return nil, nil, fmt.Errorf("microjob: tile map of job %s: %w", plan.JobID, err)
	}
	return pic, processors, nil
}

// BlockOutputs reads every block's output of a verified verdict from the
// accepted result directories, each checked against its disclosed hash:
// outputs[b] is block b's output and from[b] the processor whose result
// it was read from. Culprits' results are never used; when one
// processor's directory is unusable the next one's is tried, and when
// none is left the error wraps ErrOutput.
func BlockOutputs(ctx context.Context, plan *jobs.Plan, v Verdict, store ResultReader) (outputs [][]byte, from []string, err error) {
	if !v.Verified {
		return nil, nil, fmt.Errorf("%w: %d missing, %d to redo, %d disputes", ErrNotReady, len(v.Missing), len(v.Redo), len(v.Disputes))
	}
	culprit := map[string]bool{}
	for _, c := range v.Culprits {
		culprit[c] = true
	}
	byMicro := map[string][]Result{}
	for _, r := range v.Results {
		if !culprit[r.Processor] {
			byMicro[r.MicroID] = append(byMicro[r.MicroID], r)
		}
	}
	var micros []*jobs.MicroJob
	for m := range plan.Macros {
		for s := range plan.Macros[m].Micros {
			if mu := &plan.Macros[m].Micros[s]; !mu.Verifier {
				micros = append(micros, mu)
			}
		}
	}
	// Each result is a round trip to the processor that holds it: read
	// up to fetchParallel MicroJobs at once. Every MicroJob writes only
	// its own blocks, and the error reported is that of the first failing
	// MicroJob in plan order, so the outcome does not depend on timing.
	outputs = make([][]byte, plan.NumBlocks)
	from = make([]string, plan.NumBlocks)
	fails := make([]error, len(micros))
	sem := make(chan struct{}, fetchParallel)
	var wg sync.WaitGroup
	for i, mu := range micros {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var errs []error
			for _, r := range byMicro[mu.ID.String()] {
				outs, err := readResult(ctx, store, mu, r)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				for i, b := range mu.Blocks {
					outputs[b], from[b] = outs[i], r.Processor
				}
				return
			}
			fails[i] = fmt.Errorf("microjob %s: no usable result: %w", mu.ID, errors.Join(append(errs, ErrOutput)...))
		}()
	}
	wg.Wait()
	for _, err := range fails {
		if err != nil {
			return nil, nil, err
		}
	}
	return outputs, from, nil
}

// fetchParallel is how many result directories BlockOutputs reads at once.
const fetchParallel = 16

// readResult reads and checks every block output of one result directory.
func readResult(ctx context.Context, store ResultReader, mu *jobs.MicroJob, r Result) ([][]byte, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: processor %s, result %s: %s", ErrOutput, r.Processor, r.ResultCID, fmt.Sprintf(format, args...))
	}
	root, err := cid.Decode(r.ResultCID)
	if err != nil {
		return nil, fail("%v", err)
	}
	node, err := store.DAGService().Get(ctx, root)
	if err != nil {
		return nil, fail("%v", err)
	}
	dir, err := uio.NewDirectoryFromNode(store.DAGService(), node)
	if err != nil {
		return nil, fail("not a directory: %v", err)
	}
	outs := make([][]byte, len(mu.Blocks))
	for i, b := range mu.Blocks {
		child, err := dir.Find(ctx, BlockFileName(b))
		if err != nil {
			return nil, fail("block %d: %v", b, err)
		}
		rc, err := store.Cat(ctx, child.Cid())
		if err != nil {
			return nil, fail("block %d: %v", b, err)
		}
		var buf bytes.Buffer
		_, err = buf.ReadFrom(io.LimitReader(rc, MaxBlockOutputBytes+1))
		rc.Close()
		if err != nil {
			return nil, fail("block %d: %v", b, err)
		}
		if buf.Len() > MaxBlockOutputBytes {
			return nil, fail("block %d: output over %d bytes", b, MaxBlockOutputBytes)
		}
		sum := sha256.Sum256(buf.Bytes())
		if i >= len(r.Hashes) || hex.EncodeToString(sum[:]) != r.Hashes[i] {
			return nil, fail("block %d: output does not hash to the disclosed hash", b)
		}
		outs[i] = buf.Bytes()
	}
	return outs, nil
}
