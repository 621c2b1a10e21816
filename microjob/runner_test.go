package microjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/assemble"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/wasm"
)

// localOutputs runs every block of the job directly on the executor: the
// reference the Runner must reproduce.
func localOutputs(t *testing.T, e wasm.Runner, plan *jobs.Plan, code, data []byte) [][]byte {
	t.Helper()
	outs := make([][]byte, plan.NumBlocks)
	for b := range plan.NumBlocks {
		off, n, err := plan.BlockRange(b)
		if err != nil {
			t.Fatal(err)
		}
		if outs[b], err = e.Run(context.Background(), code, data[off:off+n]); err != nil {
			t.Fatalf("block %d: %v", b, err)
		}
	}
	return outs
}

func newRunner(t *testing.T, e wasm.Runner, store BlockAdder, mutate func(*Config)) *Runner {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Exec, cfg.Blocks = e, store
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// processAll runs every MicroJob of the plan, each by its own processor,
// and returns the commitments and disclosures they publish.
type processed struct {
	procs   map[jobs.ID]string // MicroJob → processor
	outputs map[jobs.ID]Output
	commits []Commitment
	discl   []Disclosure
}

func processAll(t *testing.T, r *Runner, info *jobs.JobInfo, plan *jobs.Plan, code, data []byte) processed {
	t.Helper()
	p := processed{procs: map[jobs.ID]string{}, outputs: map[jobs.ID]Output{}}
	for m := range plan.Macros {
		for s := range plan.Macros[m].Micros {
			mu := &plan.Macros[m].Micros[s]
			out, err := r.Run(context.Background(), Input{Info: info, Plan: plan, Micro: mu, Code: code, Data: data})
			if err != nil {
				t.Fatalf("MicroJob %d/%d: %v", m, s, err)
			}
			proc := newPeer(t)
			salt, err := NewSalt()
			if err != nil {
				t.Fatal(err)
			}
			d := out.Disclosure(plan, mu, proc, walletOf(proc), salt)
			c, err := d.Commitment()
			if err != nil {
				t.Fatal(err)
			}
			p.procs[mu.ID], p.outputs[mu.ID] = proc, out
			p.commits, p.discl = append(p.commits, c), append(p.discl, d)
		}
	}
	return p
}

// checkOutputs compares each MicroJob's hashes and stored files with the
// local reference.
func checkOutputs(t *testing.T, store *ipfs.Node, plan *jobs.Plan, p processed, want [][]byte) {
	t.Helper()
	for m := range plan.Macros {
		for s := range plan.Macros[m].Micros {
			mu := &plan.Macros[m].Micros[s]
			out := p.outputs[mu.ID]
			if !equalBlocks(out.BlockIndices, mu.Blocks) {
				t.Fatalf("MicroJob %d/%d: blocks %v, want %v", m, s, out.BlockIndices, mu.Blocks)
			}
			r := Result{Processor: "p", ResultCID: out.ResultCID.String()}
			for i, b := range mu.Blocks {
				if out.BlockHashes[i] != sha256.Sum256(want[b]) {
					t.Fatalf("MicroJob %d/%d block %d: hash differs from the local run", m, s, b)
				}
				r.Hashes = append(r.Hashes, hex.EncodeToString(out.BlockHashes[i][:]))
			}
			files, err := readResult(context.Background(), store, mu, r)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range mu.Blocks {
				if !bytes.Equal(files[i], want[b]) {
					t.Fatalf("stored output of block %d differs", b)
				}
			}
		}
	}
}

func TestRunMandelbrotMatchesLocalAndAssembles(t *testing.T) {
	ctx := context.Background()
	code := buildExample(t, "mandelbrot")
	params := tiles.Params{Width: 64, Height: 40, TileWidth: 16, TileHeight: 16, MaxIter: 64, View: tiles.DefaultView}
	data, err := params.Job()
	if err != nil {
		t.Fatal(err)
	}
	// 12 tiles; N=2, K=3: two MacroJobs of two regular MicroJobs and a verifier.
	info, plan := newJob(t, code, data, tiles.DescriptorSize, 2, 3, jobs.Output{Kind: jobs.OutputPNGGrid, Columns: uint32(params.Columns())})
	e := executor(t)
	want := localOutputs(t, e, plan, code, data)
	store := newStore(t)
	p := processAll(t, newRunner(t, e, store, nil), info, plan, code, data)
	checkOutputs(t, store, plan, p, want)

	v, err := Judge(info, plan, p.commits, p.discl)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Verified || len(v.Counts) != plan.NumMicroJobs() {
		t.Fatalf("honest run not verified: %+v", v)
	}
	root, err := Assemble(ctx, info, plan, v, store)
	if err != nil {
		t.Fatal(err)
	}
	got := catPath(t, store, root, OutputFileName(info.Output.Kind))
	wantPic, err := assemble.PNGGrid(want, params.Columns())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantPic) {
		t.Fatal("assembled picture differs from the local assembly")
	}

	// The tile map: every tile has the colour of the processor its
	// output was read from.
	outs, from, err := BlockOutputs(ctx, plan, v, store)
	if err != nil {
		t.Fatal(err)
	}
	for b := range outs {
		if !bytes.Equal(outs[b], want[b]) || v.Counts[from[b]] == 0 {
			t.Fatalf("block %d: output read from %q differs or is not credited", b, from[b])
		}
	}
	mapPNG, order, err := TileMap(ctx, info, plan, v, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(mapPNG))
	if err != nil {
		t.Fatal(err)
	}
	// The 64×40 grid, and below it a legend row per processor.
	if img.Bounds().Dx() < 64 || img.Bounds().Dy() <= 40+16*len(order) || len(order) == 0 {
		t.Fatalf("tile map %v, order %v", img.Bounds(), order)
	}
	for b := range outs {
		x, y := (b%params.Columns())*16+8, (b/params.Columns())*16+4
		if got, want := color.NRGBAModel.Convert(img.At(x, y)), assemble.ProcessorColour(slices.Index(order, from[b])); got != want {
			t.Fatalf("tile %d at (%d,%d) is %v, want %v", b, x, y, got, want)
		}
	}
	concat := *info
	concat.Output = jobs.Output{Kind: jobs.OutputConcat}
	if _, _, err := TileMap(ctx, &concat, plan, v, store, nil); !errors.Is(err, ErrPlan) {
		t.Fatalf("tile map of a concat job: %v", err)
	}
}

func TestRunWordcountMatchesLocalAndAssembles(t *testing.T) {
	ctx := context.Background()
	code := buildExample(t, "wordcount")
	var text strings.Builder
	words := []string{"alpha", "beta", "gamma", "delta", "mesh", "job"}
	for i := range 400 {
		text.WriteString(words[(i*7)%len(words)])
		text.WriteByte(" \n"[i%5/4])
	}
	data := []byte(text.String())
	info, plan := newJob(t, code, data, 128, 3, 2, jobs.Output{Kind: jobs.OutputConcat})
	e := executor(t)
	want := localOutputs(t, e, plan, code, data)
	store := newStore(t)
	p := processAll(t, newRunner(t, e, store, nil), info, plan, code, data)
	checkOutputs(t, store, plan, p, want)

	v, err := Judge(info, plan, p.commits, p.discl)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Verified {
		t.Fatalf("honest run not verified: %+v", v)
	}
	root, err := Assemble(ctx, info, plan, v, store)
	if err != nil {
		t.Fatal(err)
	}
	if got := catPath(t, store, root, "output.bin"); !bytes.Equal(got, assemble.Concat(want)) {
		t.Fatal("assembled output differs from the local outputs in block order")
	}
}

// hostile modules are minimal WASI commands: a _start and a memory.
func hostileModule(body ...byte) []byte {
	fn := append([]byte{0x00}, body...) // no locals
	fn = append(fn, 0x0b)
	code := append([]byte{0x01, byte(len(fn))}, fn...)
	exports := []byte{0x02, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00, 0x06, 'm', 'e', 'm', 'o', 'r', 'y', 0x02, 0x00}
	m := []byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}
	m = append(m, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00) // type: func () -> ()
	m = append(m, 0x03, 0x02, 0x01, 0x00)             // one function of type 0
	m = append(m, 0x05, 0x03, 0x01, 0x00, 0x01)       // memory, min 1 page
	m = append(m, 0x07, byte(len(exports)))
	m = append(m, exports...)
	m = append(m, 0x0a, byte(len(code)))
	return append(m, code...)
}

func TestRunHostileCodeFailsTheMicroJob(t *testing.T) {
	cfg := wasm.DefaultConfig()
	cfg.Timeout = 300 * time.Millisecond
	e, err := wasm.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	cases := []struct {
		name string
		code []byte
		want error
	}{
		// loop; br 0; end
		{"infinite loop", hostileModule(0x03, 0x40, 0x0c, 0x00, 0x0b), wasm.ErrTimeout},
		// if memory.grow(65535) == -1 { unreachable }: ask for 4 GiB at once.
		{"4 GiB allocation", hostileModule(0x41, 0xff, 0xff, 0x03, 0x40, 0x00, 0x41, 0x7f, 0x46, 0x04, 0x40, 0x00, 0x0b), wasm.ErrMemoryLimit},
	}
	data := bytes.Repeat([]byte("x"), 40)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			info, plan := newJob(t, tc.code, data, 4, 2, 2, jobs.Output{Kind: jobs.OutputConcat})
			reg := prometheus.NewRegistry()
			store := &countingStore{Node: newStore(t)}
			r := newRunner(t, e, store, func(c *Config) { c.Registerer = reg })
			mu := &plan.Macros[0].Micros[0]
			_, err := r.Run(context.Background(), Input{Info: info, Plan: plan, Micro: mu, Code: tc.code, Data: data})
			if !errors.Is(err, ErrBlockFailed) || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want ErrBlockFailed and %v", err, tc.want)
			}
			if want := "block " + strconv.FormatUint(mu.Blocks[0], 10); !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not name %q", err, want)
			}
			if store.dirs != 0 {
				t.Fatal("a failed MicroJob stored a result")
			}
			if got := testutil.ToFloat64(r.blocks); got != 0 {
				t.Fatalf("blocks = %v after the first block failed, want 0", got)
			}
		})
	}
}

func TestRunRejectsInconsistentInput(t *testing.T) {
	code := hostileModule() // never run
	data := bytes.Repeat([]byte("y"), 40)
	info, plan := newJob(t, code, data, 4, 2, 2, jobs.Output{Kind: jobs.OutputConcat})
	_, other := newJob(t, code, data[:39], 4, 2, 2, jobs.Output{Kind: jobs.OutputConcat})
	r := newRunner(t, executor(t), &countingStore{Node: newStore(t)}, nil)
	mu := &plan.Macros[0].Micros[0]
	forged := *mu
	forged.Blocks = mu.Blocks[:len(mu.Blocks)-1]
	cases := map[string]Input{
		"short data":      {Info: info, Plan: plan, Micro: mu, Code: code, Data: data[:39]},
		"foreign plan":    {Info: info, Plan: other, Micro: mu, Code: code, Data: data},
		"foreign micro":   {Info: info, Plan: plan, Micro: &other.Macros[0].Micros[0], Code: code, Data: data},
		"forged blocks":   {Info: info, Plan: plan, Micro: &forged, Code: code, Data: data},
		"missing plan":    {Info: info, Micro: mu, Code: code, Data: data},
		"missing jobinfo": {Plan: plan, Micro: mu, Code: code, Data: data},
	}
	for name, in := range cases {
		if _, err := r.Run(context.Background(), in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", name, err)
		}
	}
	if _, err := NewRunner(Config{Blocks: &countingStore{Node: newStore(t)}}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("no executor: err = %v", err)
	}
	if _, err := NewRunner(Config{Exec: executor(t)}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("no store: err = %v", err)
	}
}

// TestTamperedResultIsCaught runs a real job where one processor corrupts
// every block it runs. If it holds a block the verifier also ran, Judge
// reports the dispute and a third run names it the culprit.
func TestTamperedResultIsCaught(t *testing.T) {
	code := buildExample(t, "wordcount")
	data := []byte(strings.Repeat("one two three four five six seven ", 20))
	info, plan := newJob(t, code, data, 64, 3, 2, jobs.Output{Kind: jobs.OutputConcat})
	e := executor(t)
	store := newStore(t)
	want := localOutputs(t, e, plan, code, data)
	p := processAll(t, newRunner(t, e, store, nil), info, plan, code, data)

	// The cheat redoes, under its own name, the regular MicroJob holding the
	// first verifier block of MacroJob 0, and is the only one to disclose it.
	mac := &plan.Macros[0]
	ver := mac.Verifier()
	reg, _, err := plan.Counterpart(ver.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	cheatRunner := newRunner(t, e, store, func(c *Config) {
		c.Tamper = func(_ uint64, _ bool, out []byte) []byte { return append(out, "bogus 1\n"...) }
	})
	out, err := cheatRunner.Run(context.Background(), Input{Info: info, Plan: plan, Micro: reg, Code: code, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	cheat := newPeer(t)
	salt, _ := NewSalt()
	d := out.Disclosure(plan, reg, cheat, walletOf(cheat), salt)
	c, _ := d.Commitment()
	var commits []Commitment
	var discl []Disclosure
	for i := range p.discl {
		if p.discl[i].MicroID != reg.ID {
			commits, discl = append(commits, p.commits[i]), append(discl, p.discl[i])
		}
	}
	commits, discl = append(commits, c), append(discl, d)

	v, err := Judge(info, plan, commits, discl)
	if err != nil {
		t.Fatal(err)
	}
	if v.Verified || len(v.Disputes) == 0 {
		t.Fatalf("tampered result not disputed: %+v", v)
	}
	dis := v.Disputes[0]
	if dis.Processors != [2]string{cheat, p.procs[ver.ID]} || dis.Block != ver.Blocks[0] {
		t.Fatalf("dispute %+v, want block %d between the cheat and the verifier", dis, ver.Blocks[0])
	}
	// An honest third processor runs the disputed block.
	if v, err = resolveBy(v, dis, sha256.Sum256(want[dis.Block]), newPeer(t)); err != nil {
		t.Fatal(err)
	}
	if len(v.Culprits) != 1 || v.Culprits[0] != cheat {
		t.Fatalf("culprits %v, want the cheat", v.Culprits)
	}
	if len(v.Redo) != 1 || v.Redo[0] != reg.ID.String() || v.Counts[cheat] != 0 || v.Verified {
		t.Fatalf("after resolve: redo %v, cheat count %d, verified %v", v.Redo, v.Counts[cheat], v.Verified)
	}
	if _, err := Assemble(context.Background(), info, plan, v, store); !errors.Is(err, ErrNotReady) {
		t.Fatalf("assemble with a MicroJob to redo: %v", err)
	}
}

func TestRunMetricsAndBlockNames(t *testing.T) {
	if got := BlockFileName(42); got != "00000000000000000042" || len(BlockFileName(^uint64(0))) != BlockNameWidth {
		t.Fatalf("BlockFileName(42) = %q", got)
	}
	if BlockFileName(9) >= BlockFileName(10) {
		t.Fatal("name order is not block order")
	}
	code := buildExample(t, "wordcount")
	data := []byte(strings.Repeat("a b c ", 30))
	info, plan := newJob(t, code, data, 32, 2, 2, jobs.Output{Kind: jobs.OutputConcat})
	reg := prometheus.NewRegistry()
	store := &countingStore{Node: newStore(t)}
	r := newRunner(t, executor(t), store, func(c *Config) { c.Registerer = reg })
	mu := &plan.Macros[0].Micros[0]
	out, err := r.Run(context.Background(), Input{Info: info, Plan: plan, Micro: mu, Code: code, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if store.dirs != 1 || len(store.last) != len(mu.Blocks) {
		t.Fatalf("stored %d dirs, last with %d files", store.dirs, len(store.last))
	}
	for i, b := range mu.Blocks {
		f, ok := store.last[BlockFileName(b)]
		if !ok || sha256.Sum256(f) != out.BlockHashes[i] {
			t.Fatalf("block %d: file missing or not matching its hash", b)
		}
	}
	if got := testutil.ToFloat64(r.blocks); got != float64(len(mu.Blocks)) {
		t.Fatalf("blocks = %v, want %d", got, len(mu.Blocks))
	}
	if n, err := testutil.GatherAndCount(reg, "jobmesh_microjob_blocks_total"); err != nil || n != 1 {
		t.Fatalf("blocks counter registered: %d, %v", n, err)
	}
	// A canceled run runs no block and stores nothing.
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Run(cctx, Input{Info: info, Plan: plan, Micro: mu, Code: code, Data: data}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled run: %v", err)
	}
	if got := testutil.ToFloat64(r.blocks); got != float64(len(mu.Blocks)) || store.dirs != 1 {
		t.Fatalf("after a canceled run: blocks = %v, dirs = %d", got, store.dirs)
	}
	// A second runner on the same registry is refused, not silently unmeasured.
	if _, err := NewRunner(Config{Exec: executor(t), Blocks: store, Registerer: reg}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("duplicate registration: %v", err)
	}
}

// countingStore is the real store, counting the directories added.
type countingStore struct {
	*ipfs.Node
	dirs int
	last map[string][]byte
}

func (c *countingStore) AddDir(ctx context.Context, entries map[string][]byte) (cid.Cid, error) {
	c.dirs++
	c.last = entries
	return c.Node.AddDir(ctx, entries)
}

// catPath reads file name of the directory root.
func catPath(t *testing.T, store *ipfs.Node, root cid.Cid, name string) []byte {
	t.Helper()
	ctx := context.Background()
	nd, err := store.DAGService().Get(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := uio.NewDirectoryFromNode(store.DAGService(), nd)
	if err != nil {
		t.Fatal(err)
	}
	child, err := dir.Find(ctx, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rc, err := store.Cat(ctx, child.Cid())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSmallResultsTravelInline: a job's small results come with every
// block of their result directory inline in the disclosure, and a node
// connected to nobody assembles the job's output from those blocks alone.
func TestSmallResultsTravelInline(t *testing.T) {
	ctx := context.Background()
	code := buildExample(t, "wordcount")
	data := []byte(strings.Repeat("mesh job alpha beta\n", 40))
	info, plan := newJob(t, code, data, 64, 2, 2, jobs.Output{Kind: jobs.OutputConcat})
	e := executor(t)
	want := localOutputs(t, e, plan, code, data)
	p := processAll(t, newRunner(t, e, newStore(t), nil), info, plan, code, data)
	v, err := Judge(info, plan, p.commits, p.discl)
	if err != nil || !v.Verified {
		t.Fatalf("honest run not verified: %v %+v", err, v)
	}
	alone := newStore(t)
	for _, d := range p.discl {
		if len(d.Inline) == 0 || !d.Inline[0].Cid().Equals(d.ResultCID) {
			t.Fatalf("MicroJob %s: %d inline blocks, the first not its result %s", d.MicroID, len(d.Inline), d.ResultCID)
		}
		// The record as stored is what the finalizer reads.
		dd, err := DecodeDisclosure(d.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if err := alone.PutBlocks(ctx, dd.Inline); err != nil {
			t.Fatal(err)
		}
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	root, err := Assemble(actx, info, plan, v, alone)
	if err != nil {
		t.Fatalf("assembling from inline blocks alone: %v", err)
	}
	if got := catPath(t, alone, root, "output.bin"); !bytes.Equal(got, assemble.Concat(want)) {
		t.Fatal("assembled output differs from the local outputs in block order")
	}
}
