package processor_test

import (
	"bytes"
	"context"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// flowMesh starts a mesh with fast timeouts: a bootstrap node, processors
// and one client (the last member).
func flowMesh(t *testing.T, processors int, tune func(m *localmesh.Member, pc *processor.Config)) *localmesh.Mesh {
	t.Helper()
	return flowMeshWith(t, localmesh.Options{Processors: processors}, tune)
}

// flowMeshWith is flowMesh with more of the mesh's options set.
func flowMeshWith(t *testing.T, opts localmesh.Options, tune func(m *localmesh.Member, pc *processor.Config)) *localmesh.Mesh {
	t.Helper()
	opts.Clients = 1
	opts.Processor = func(m *localmesh.Member, pc *processor.Config) {
		testTimeouts(pc)
		pc.DiscloseGrace = 5 * time.Second
		pc.RerunTimeout = 5 * time.Second
		if tune != nil {
			tune(m, pc)
		}
	}
	return meshtest.New(t, opts)
}

type mandelbrotJob struct{ meshtest.Mandelbrot }

func newMandelbrot(t *testing.T, w, h, tile uint32) mandelbrotJob {
	return mandelbrotJob{meshtest.NewMandelbrot(t, w, h, tile)}
}

func (j mandelbrotJob) spec(n, k uint32) dapp.Spec {
	return dapp.Spec{
		Code: j.Code, Data: j.Data,
		Slicing:  jobs.Slicing{BlockSize: tiles.DescriptorSize, MicroJobs: n, BlocksPerMicro: k},
		Price:    big.NewInt(1_000_000_000),
		Deadline: time.Now().Add(time.Hour), // the creator: the client's wallet
		Output:   jobs.Output{Kind: jobs.OutputPNGGrid, Columns: uint32(j.Params.Columns())},
	}
}

func client(m *localmesh.Mesh) *localmesh.Member { return m.Members[len(m.Members)-1] }

// holdUntil is a processor.Config.Hold that keeps every MicroJob from
// running until release is closed (or its run is cancelled), telling held
// first when it is set.
func holdUntil(release <-chan struct{}, held func(micro jobs.ID)) func(context.Context, jobs.ID, jobs.ID) {
	return func(ctx context.Context, _, micro jobs.ID) {
		if held != nil {
			held(micro)
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
}

// heldMicros are the MicroJobs the processors of a heldMesh hold, until
// release is closed.
type heldMicros struct {
	release chan struct{}
	mu      sync.Mutex
	ids     map[jobs.ID]bool
	// checks, once holdChecks set it, holds every MicroJob outside
	// public (a job's verifiers) until it is closed.
	checks chan struct{}
	public map[jobs.ID]bool
}

// holdChecks makes the processors hold every MicroJob that plan's rooms
// do not have (the verifiers, drawn once the rooms' MicroJobs are
// committed) until release is called, so that the job cannot reach its
// verdict before.
func (h *heldMicros) holdChecks(plan *jobs.Plan) (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.checks, h.public = make(chan struct{}), map[jobs.ID]bool{}
	for _, mac := range plan.Macros {
		for _, mu := range mac.Micros {
			h.public[mu.ID] = true
		}
	}
	return sync.OnceFunc(func() { close(h.checks) })
}

// heldMesh is a flow mesh of n processors that lock one MicroJob a turn
// and hold each they run until h.release is closed. Their processing
// timeout is a minute, so that neither the held locks lapse nor a room
// whose members hold its MicroJobs lets more ranks in (room_stalled.txt
// in macrojob's testdata) while a test looks at them.
func heldMesh(t *testing.T, n int) (m *localmesh.Mesh, h *heldMicros) {
	t.Helper()
	h = &heldMicros{release: make(chan struct{}), ids: map[jobs.ID]bool{}}
	m = flowMesh(t, n, func(_ *localmesh.Member, pc *processor.Config) {
		pc.Room.Queue.MaxLocksPerTurn = 1
		pc.Room.Queue.ProcessingTimeout = time.Minute
		hold := holdUntil(h.release, func(micro jobs.ID) {
			h.mu.Lock()
			h.ids[micro] = true
			h.mu.Unlock()
		})
		pc.Hold = func(ctx context.Context, job, micro jobs.ID) {
			h.mu.Lock()
			checks, check := h.checks, h.checks != nil && !h.public[micro]
			h.mu.Unlock()
			if check {
				holdUntil(checks, nil)(ctx, job, micro)
				return
			}
			hold(ctx, job, micro)
		}
	})
	return m, h
}

// held returns the MicroJobs held so far.
func (h *heldMicros) held() []jobs.ID {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Collect(maps.Keys(h.ids))
}

// submitPlan submits spec from the mesh's client and returns the job and
// its public plan.
func submitPlan(t *testing.T, ctx context.Context, m *localmesh.Mesh, spec dapp.Spec) (*jobs.JobInfo, *jobs.Plan) {
	t.Helper()
	info, err := client(m).DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	return info, plan
}

func runJob(t *testing.T, m *localmesh.Mesh, spec dapp.Spec, timeout time.Duration) (*jobs.JobInfo, dapp.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := client(m)
	info, err := c.DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatalf("job %s: %v; the client's store: %s", info.ID(), err, judgeView(m, info))
	}
	return info, res
}

// output fetches the job's assembled file through the client's node.
func output(t *testing.T, m *localmesh.Mesh, res dapp.Result, kind string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "out")
	if err := client(m).IPFS.Get(ctx, res.Output, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, microjob.OutputFileName(kind)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkComplete(t *testing.T, info *jobs.JobInfo, res dapp.Result) {
	t.Helper()
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if !v.Verified || !v.Complete || len(v.Disputes) != 0 {
		t.Fatalf("verdict not verified: %+v", v)
	}
	if len(v.VerifierHashes) != len(plan.Macros) {
		t.Fatalf("verifier hashes for %d of %d MacroJobs", len(v.VerifierHashes), len(plan.Macros))
	}
	credited := 0
	for _, n := range v.Counts {
		credited += n
	}
	if credited < plan.NumMicroJobs() {
		t.Fatalf("%d MicroJobs credited, the plan has %d", credited, plan.NumMicroJobs())
	}
}

func TestJobEndToEnd(t *testing.T) {
	m := flowMesh(t, 5, nil)
	job := newMandelbrot(t, 192, 160, 32) // 6×5 = 30 tiles
	// N=3, K=4: 12 blocks a MacroJob, so 3 MacroJobs (the last one short).
	info, res := runJob(t, m, job.spec(3, 4), 3*time.Minute)
	plan, _ := jobs.Slice(info)
	if len(plan.Macros) < 3 {
		t.Fatalf("plan has %d MacroJobs, want at least 3", len(plan.Macros))
	}
	checkComplete(t, info, res)
	if len(res.Culprits) != 0 {
		t.Fatalf("culprits in an honest mesh: %v", res.Culprits)
	}
	got := output(t, m, res, info.Output.Kind)
	if want := job.Local(t); !bytes.Equal(got, want) {
		t.Fatalf("mesh output (%d bytes) differs from the local run (%d bytes)", len(got), len(want))
	}
	if len(res.Verdict.Counts) < 2 {
		t.Fatalf("one processor did all the work: %v", res.Verdict.Counts)
	}
}

func TestWrongOutputNamesCulpritAndJobCompletes(t *testing.T) {
	const liarIndex = 2
	var m *localmesh.Mesh
	m = flowMesh(t, 4, liarTune(&m, liarIndex))
	liar := m.Members[liarIndex].Host.ID().String()
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	if len(res.Culprits) != 1 || res.Culprits[0] != liar {
		t.Fatalf("culprits %v, want the liar %s; invalid %+v; disputes %+v; resolutions %+v", res.Culprits, liar, res.Verdict.Invalid, res.Verdict.Disputes, res.Verdict.Resolutions)
	}
	for _, r := range res.Verdict.Results {
		if r.Processor == liar {
			t.Fatalf("a result of the liar was accepted: %+v", r)
		}
	}
	if _, ok := res.Verdict.Counts[liar]; ok {
		t.Fatalf("the liar is credited: %v", res.Verdict.Counts)
	}
	got := output(t, m, res, info.Output.Kind)
	if want := job.Local(t); !bytes.Equal(got, want) {
		t.Fatalf("mesh output differs from the local run")
	}
}

// liarTune makes the processors liars return one identical wrong output
// for every block, re-runs included (where one checks its own lie, the
// self-check catches it), and makes the honest processors hold their
// first MicroJob until a liar has committed one, so that a liar surely
// takes part. *mp is read when a processor runs, after the mesh exists.
func liarTune(mp **localmesh.Mesh, liars ...int) func(*localmesh.Member, *processor.Config) {
	return func(mem *localmesh.Member, pc *processor.Config) {
		if slices.Contains(liars, mem.Index) {
			pc.Tamper = func(_ uint64, _ bool, out []byte) []byte { return append(out, 0xff) }
			return
		}
		first := true
		pc.Hold = func(ctx context.Context, _, _ jobs.ID) {
			if !first {
				return
			}
			first = false
			_ = waitFor(ctx, func() bool {
				recs, err := mem.Store.Query(ctx, "/jobs")
				if err != nil {
					return false
				}
				return slices.ContainsFunc(recs, func(r crdt.Record) bool {
					return r.Type == records.CommitType && slices.ContainsFunc(liars, func(i int) bool {
						return (*mp).Members[i].Host.ID() == r.Author
					})
				})
			})
		}
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func TestOwnerKilledMidMicroJob(t *testing.T) {
	const victim = 1
	held := make(chan jobs.ID, 1)
	m := flowMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		// One MicroJob per turn, so that work spreads over every
		// processor and the victim is sure to get some.
		pc.Room.Queue.MaxLocksPerTurn = 1
		if mem.Index != victim {
			return
		}
		// The victim stops on its first MicroJob until it is killed.
		pc.Hold = func(ctx context.Context, _, micro jobs.ID) {
			select {
			case held <- micro:
			default:
			}
			<-ctx.Done()
		}
	})
	job := newMandelbrot(t, 192, 160, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	info, err := client(m).DApp.Submit(ctx, job.spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	var micro jobs.ID
	select {
	case micro = <-held:
	case <-ctx.Done():
		t.Fatal("the victim never got a MicroJob")
	}
	victimID := m.Members[victim].Host.ID().String()
	if err := m.Stop(victim); err != nil {
		t.Fatal(err)
	}
	res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	for _, r := range res.Verdict.Results {
		if r.Processor == victimID {
			t.Fatalf("the killed processor has a result: %+v", r)
		}
	}
	redone := false
	for _, r := range res.Verdict.Results {
		redone = redone || r.MicroID == micro.String()
	}
	if !redone {
		t.Fatalf("MicroJob %s held by the killed processor was not redone", micro)
	}
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
}

// TestJobCompletesWithTenPercentLoss: every node ignores 10% of the
// pubsub messages it receives, on every topic (Jobs and Job channels,
// rooms, the store's head announcements), and the job still completes
// with the right output.
func TestJobCompletesWithTenPercentLoss(t *testing.T) {
	m := flowMeshWith(t, localmesh.Options{
		Processors: 4,
		P2P:        func(_ *localmesh.Member, cfg *p2p.Config) { cfg.DropInbound = 0.1 },
	}, nil)
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
	var dropped float64
	for _, mem := range m.Running() {
		dropped += counterSum(t, mem.Metrics, "jobmesh_p2p_fault_dropped_total")
	}
	if dropped == 0 {
		t.Fatal("no message was dropped: the loss was not injected")
	}
	t.Logf("%v messages dropped", dropped)
}

// TestSelfCheckingLiarIsCaught: a liar that runs a whole job alone checks
// every verifier block against its own lie, so the verifier hashes agree.
// Each such self-checked block goes to the three other processors; all
// disagree with the liar, a lead that an exhausted pool accepts, so it is
// named culprit, its MicroJobs are redone by the honest processors, and
// the output is right, though they answer only after they were dropped
// for silence. (With two others, 2 votes to 1 is too narrow a vote to
// name anyone: finish.Escalation.)
func TestSelfCheckingLiarIsCaught(t *testing.T) {
	const liarIndex = 1
	m := flowMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		if mem.Index == liarIndex {
			pc.Tamper = func(_ uint64, _ bool, out []byte) []byte { return append(out, 0xff) }
		}
	})
	meshtest.WaitConnected(t, m)
	// Every processor is advertised before the honest ones stop, so the
	// checks can name them.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := waitFor(ctx, func() bool {
		ads, err := client(m).Processors(ctx)
		return err == nil && len(ads) == 4
	}); err != nil {
		t.Fatal("processors not advertised")
	}
	honest := []int{2, 3, 4}
	for _, i := range honest {
		if err := m.Stop(i); err != nil {
			t.Fatal(err)
		}
	}
	liar := m.Members[liarIndex].Host.ID().String()
	job := newMandelbrot(t, 128, 96, 32) // 4×3 = 12 tiles
	info, plan := submitPlan(t, ctx, m, job.spec(3, 2))
	// The liar alone discloses everything and asks for checks, which name
	// the stopped processors.
	if err := waitFor(ctx, func() bool {
		recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/check")
		return err == nil && len(recs) >= len(plan.Macros)
	}); err != nil {
		t.Fatal("no checks of self-checked blocks were requested")
	}
	// The stopped re-runners are dropped for silence, and nobody is left
	// to draw in their place: they answer once they are back, and a late
	// answer still votes.
	if err := waitFor(ctx, func() bool {
		recs, _ := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/check")
		for _, r := range recs {
			if c, err := records.DecodeCheck(r.Payload); err == nil && len(c.Dropped) > 0 {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal("the silent re-runners were never dropped")
	}
	for _, i := range honest {
		if err := m.Restart(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	if len(res.Culprits) != 1 || res.Culprits[0] != liar {
		t.Fatalf("culprits %v, want the liar %s", res.Culprits, liar)
	}
	if _, ok := res.Verdict.Counts[liar]; ok {
		t.Fatalf("the liar is credited: %v", res.Verdict.Counts)
	}
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
}

// TestSilentCommitterIsRedone: a processor that commits a MicroJob and
// stops before the disclosure round leaves a commitment nobody can open.
// After DiscloseGrace its MicroJob is redone by another processor and the
// job completes with the right output. Four processors: a block that one of
// the others self-checks lists the stopped one in its rerun order, and a
// silent re-runner counts against the leader, so two live re-runners must
// outweigh it.
func TestSilentCommitterIsRedone(t *testing.T) {
	const silent = 1
	committed := make(chan struct{})
	released := make(chan struct{})
	m := flowMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		if mem.Index == silent {
			runs := 0
			pc.Hold = func(ctx context.Context, _, _ jobs.ID) {
				if runs++; runs == 2 {
					// The first MicroJob is committed: stop here until
					// the node is stopped.
					close(committed)
					<-ctx.Done()
				}
			}
			return
		}
		first := true
		pc.Hold = func(ctx context.Context, _, _ jobs.ID) {
			if first {
				first = false
				select {
				case <-released:
				case <-ctx.Done():
				}
			}
		}
	})
	job := newMandelbrot(t, 128, 96, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	info, err := client(m).DApp.Submit(ctx, job.spec(3, 2))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-committed:
	case <-ctx.Done():
		t.Fatal("the silent processor never committed")
	}
	silentID := m.Members[silent].Host.ID().String()
	if err := m.Stop(silent); err != nil {
		t.Fatal(err)
	}
	close(released)
	res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	if _, ok := res.Verdict.Counts[silentID]; ok {
		t.Fatalf("the silent processor is credited: %v", res.Verdict.Counts)
	}
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
}
