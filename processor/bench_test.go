package processor_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"testing"
	"time"

	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/internal/cputime"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// waitExec is a wasm.Runner whose compute is a fixed wait per block, so
// that a mesh of many processors on a small machine measures coordination
// and not the machine's cores. Its output is a digest of the input, so
// every processor returns the same output for a block and verification
// passes.
type waitExec struct {
	cost time.Duration
	// calls counts blocks run, redone or verifying ones included.
	calls atomic.Int64
	// last is the wall time (UnixNano) the latest block finished.
	last atomic.Int64
}

func (e *waitExec) Run(ctx context.Context, _, input []byte) ([]byte, error) {
	if e.cost > 0 {
		t := time.NewTimer(e.cost)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	e.calls.Add(1)
	now := time.Now().UnixNano()
	for {
		l := e.last.Load()
		if now <= l || e.last.CompareAndSwap(l, now) {
			break
		}
	}
	d := sha256.Sum256(input)
	return d[:8], nil
}

// minimalWasm is the smallest valid module: the executor is replaced, so
// the code only has to pass the submission checks.
var minimalWasm = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// flowShape is one coordination benchmark's mesh and job.
type flowShape struct {
	processors int
	macros     int           // MacroJobs in the job
	n          uint32        // regular MicroJobs per MacroJob (N); K = K' = 1
	cost       time.Duration // compute per block
}

// microjobs counts the job's MicroJobs: N regular and one verifier per
// MacroJob.
func (s flowShape) microjobs() int { return s.macros * (int(s.n) + 1) }

// tuning is a set of config knobs tried against the coordination
// overhead.
type tuning struct {
	name string
	// proc adjusts each processor after the test timeouts of flowMesh.
	proc func(pc *processor.Config)
	// node adjusts each member's node config (store re-broadcast).
	node func(cfg *node.Config)
	// p2p adjusts each member's host config.
	p2p func(cfg *p2p.Config)
	// mocknet puts the hosts on libp2p's mock network instead of
	// 127.0.0.1 sockets: no handshakes, encryption or system calls.
	mocknet bool
}

// testTimeouts are flowMesh's settings: the baseline every tuning starts
// from.
func testTimeouts(pc *processor.Config) {
	pc.Poll = 200 * time.Millisecond
	pc.Room.Queue.ProcessingTimeout = 6 * time.Second
	pc.Room.Queue.OwnerTimeout = 2 * time.Second
	pc.Room.Queue.Rebroadcast = 300 * time.Millisecond
	pc.Room.LockTTL = 6 * time.Second
	pc.RevealTimeout = 5 * time.Second
	// Probe tasks have their own test (TestProbesScoreIdleMesh); the
	// others run without them, so that no probe lands in a fault.
	pc.Probes.Window = 0
}

var tunings = []tuning{
	{name: "base"},
	// Gossipsub meshes of degree 2 instead of the default 4: half the
	// duplicate copies of each message.
	{name: "mesh2", p2p: func(cfg *p2p.Config) { cfg.MeshDegree = 2 }},
	// Faster polling of the worker and settle loops, and a faster room
	// clock (Next's done check, queue expiry).
	{name: "poll50ms-roomtick20ms", proc: func(pc *processor.Config) {
		pc.Poll = 50 * time.Millisecond
		pc.Room.Tick = 20 * time.Millisecond
	}},
	// An owner locks at most one (three, five) MicroJobs per turn
	// instead of the default ten; the worker runs a turn's MicroJobs and
	// writes their commitments as one store batch.
	{name: "turn1", proc: func(pc *processor.Config) { pc.Room.Queue.MaxLocksPerTurn = 1 }},
	{name: "turn3", proc: func(pc *processor.Config) { pc.Room.Queue.MaxLocksPerTurn = 3 }},
	{name: "turn5", proc: func(pc *processor.Config) { pc.Room.Queue.MaxLocksPerTurn = 5 }},
	// The store re-announces its heads less often (localmesh sets 1s).
	{name: "storerebroadcast10s", node: func(cfg *node.Config) { cfg.Store.Rebroadcast = node.Duration(10 * time.Second) }},
	// Queue snapshots re-announced every second (half the benchmark's
	// OwnerTimeout) instead of every 300 ms, and store heads at the node
	// default (15 s) instead of the test mesh's 1 s.
	{name: "rebroadcast-slow",
		proc: func(pc *processor.Config) { pc.Room.Queue.Rebroadcast = time.Second },
		node: func(cfg *node.Config) { cfg.Store.Rebroadcast = node.DefaultConfig().Store.Rebroadcast }},
	// A store update's DAG walk waits for a block that is not local for
	// 1 s instead of the default, 3 s, for an announcement to bring it
	// before asking bitswap.
	{name: "announce1s", node: func(cfg *node.Config) { cfg.Store.AnnounceWait = node.Duration(time.Second) }},
	// Each job's records in a store of its own, as on a mesh with a
	// chain by default.
	{name: "jobstores", node: func(cfg *node.Config) { cfg.Store.JobStores = node.JobStoresOn }},
	// A store update's DAG walk waits up to 3 s for its blocks (local
	// meshes did before) instead of the node default, 20 s: under load
	// the walk also waits for the store's DAG workers, and a walk given
	// up is repaired.
	{name: "dagsync3s", node: func(cfg *node.Config) { cfg.Store.DAGSyncTimeout = node.Duration(3 * time.Second) }},
	// Hosts on libp2p's mock network: what the job costs without the
	// transport's handshakes, encryption and system calls.
	{name: "mocknet", mocknet: true},
	// The rooms' timeouts, the store's re-announcement and the
	// advertisement refresh at the node defaults (a lock holds 10 min, an
	// owner is replaced after 30 s, heads are re-announced every 15 s,
	// advertisements every 10 min) instead of the test mesh's seconds: a
	// mesh whose stores lag does not hand MicroJobs on to run again, and a
	// slow run's messages are not mostly re-announcements.
	{name: "nodedefaults", proc: nodeDefaultRooms, node: nodeDefaultStore},
	// Both: the mock network with the node defaults.
	{name: "mocknet-nodedefaults", mocknet: true, proc: nodeDefaultRooms, node: nodeDefaultStore},
	// And the job's records in a store of its own (as on a mesh with a
	// chain), then also each MacroJob's took records, commitments and
	// disclosures in a room store of its own, carried to the job's store
	// in aggregates.
	{name: "mocknet-nodedefaults-jobstores", mocknet: true, proc: nodeDefaultRooms, node: func(cfg *node.Config) {
		nodeDefaultStore(cfg)
		cfg.Store.JobStores = node.JobStoresOn
	}},
	{name: "mocknet-nodedefaults-rooms", mocknet: true, proc: nodeDefaultRooms, node: func(cfg *node.Config) {
		nodeDefaultStore(cfg)
		cfg.Store.JobStores, cfg.Store.RoomStores = node.JobStoresOn, true
	}},
	// And each host's connection manager trims to 32 connections above
	// 64 (the test mesh's watermarks are 200 and 400).
	{name: "mocknet-nodedefaults-conns64", mocknet: true, proc: nodeDefaultRooms, node: nodeDefaultStore,
		p2p: func(cfg *p2p.Config) { cfg.ConnLow, cfg.ConnHigh = 32, 64 }},
}

// nodeDefaultRooms sets the rooms' timeouts to the node defaults.
func nodeDefaultRooms(pc *processor.Config) {
	d := processor.DefaultConfig().Room
	pc.Room.Queue.ProcessingTimeout = d.Queue.ProcessingTimeout
	pc.Room.Queue.OwnerTimeout = d.Queue.OwnerTimeout
	pc.Room.Queue.Rebroadcast = d.Queue.Rebroadcast
	pc.Room.LockTTL = d.LockTTL
}

// nodeDefaultStore sets the store's re-announcement and the processors'
// advertisement refresh (localmesh sets 1 min) to the node defaults.
func nodeDefaultStore(cfg *node.Config) {
	d := node.DefaultConfig()
	cfg.Store.Rebroadcast = d.Store.Rebroadcast
	cfg.Processor.AdvertiseEvery = d.Processor.AdvertiseEvery
}

// benchMesh starts a mesh of s.processors processors sharing exec, and a
// client.
func benchMesh(b *testing.B, s flowShape, tu tuning, exec *waitExec) *localmesh.Mesh {
	b.Helper()
	return benchMeshWith(b, s, tu, exec, nil)
}

// benchMeshWith is benchMesh with each member's node config also passed
// through configure.
func benchMeshWith(b *testing.B, s flowShape, tu tuning, exec *waitExec, configure func(*localmesh.Member, *node.Config)) *localmesh.Mesh {
	b.Helper()
	// Not b.TempDir: a mesh that does not close in time keeps writing to
	// its files, and removing them under it crashes the benchmark before
	// it reports why it failed.
	dir, err := os.MkdirTemp("", "coordbench")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var mn mocknet.Mocknet
	if tu.mocknet {
		mn = mocknet.New()
		b.Cleanup(func() { mn.Close() })
	}
	m, err := localmesh.Start(context.Background(), localmesh.Options{
		Mocknet:    mn,
		Dir:        dir,
		Logger:     meshtest.Logger(),
		Processors: s.processors,
		Clients:    1,
		Configure: func(mem *localmesh.Member, cfg *node.Config) {
			if tu.node != nil {
				tu.node(cfg)
			}
			if configure != nil {
				configure(mem, cfg)
			}
		},
		P2P: func(_ *localmesh.Member, cfg *p2p.Config) {
			if tu.p2p != nil {
				tu.p2p(cfg)
			}
		},
		Processor: func(_ *localmesh.Member, pc *processor.Config) {
			testTimeouts(pc)
			pc.Exec = exec
			pc.Probes.Window = 0 // the runs counted are the jobs' blocks only
			if tu.proc != nil {
				tu.proc(pc)
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	phase(b, start, "mesh started")
	// Closing is bounded so that a mesh that does not shut down fails the
	// benchmark instead of hanging it.
	b.Cleanup(func() {
		done := make(chan error, 1)
		go func() { done <- m.Close() }()
		t := time.NewTimer(time.Minute)
		defer t.Stop()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("closing the mesh: %v", err)
			}
			_ = os.RemoveAll(dir)
		case <-t.C:
			b.Errorf("closing the mesh did not finish within a minute; its files stay in %s", dir)
		}
	})
	return m
}

// benchSpec is a job of s.macros MacroJobs of s.n one-block MicroJobs; seq
// makes each iteration's data, and so its job ID, unique.
func benchSpec(s flowShape, seq int) dapp.Spec {
	blocks := s.macros * int(s.n)
	data := make([]byte, 8*blocks)
	for i := range blocks {
		binary.BigEndian.PutUint32(data[8*i:], uint32(seq))
		binary.BigEndian.PutUint32(data[8*i+4:], uint32(i))
	}
	return dapp.Spec{
		Code: minimalWasm, Data: data,
		Slicing: jobs.Slicing{BlockSize: 8, MicroJobs: s.n, BlocksPerMicro: 1, VerifierBlocks: 1},
		Price:   big.NewInt(1_000_000_000),
		// No creator: the client's wallet is, so the client reveals the
		// check seed as a DApp does, and the verifiers do not come from
		// the lapse seed, which a late duplicate commitment changes.
		Deadline: time.Now().Add(time.Hour),
		Output:   jobs.Output{Kind: jobs.OutputConcat},
	}
}

// flowRun is what one job through the mesh took.
type flowRun struct {
	wall    time.Duration // submit → verdict readable on the client
	compute time.Duration // submit → the last block finished
	// submit → the client's store holds as many commitments (disclosures)
	// as the job has MicroJobs; zero when it did not before the verdict.
	committed, disclosed time.Duration
	blocks               int64 // blocks run by all processors
	checks               int   // self-checked blocks (re-run twice each)
}

func runBenchJob(b *testing.B, m *localmesh.Mesh, exec *waitExec, s flowShape, seq int) flowRun {
	b.Helper()
	// Generous: a job that does not finish in this time is a finding, not
	// a figure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(s.microjobs())*300*time.Millisecond)
	defer cancel()
	c := client(m)
	spec := benchSpec(s, seq)
	calls := exec.calls.Load()
	start := time.Now()
	info, err := c.DApp.Submit(ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	// The client's store shows when the last commitment and the last
	// disclosure arrived: the phases between the last block and the verdict.
	phases := make(chan [2]time.Time, 1)
	wctx, wcancel := context.WithCancel(ctx)
	changes := c.Store.Watch(wctx, records.JobKey(info.ID())+"/")
	go func() {
		var at [2]time.Time
		defer func() { phases <- at }()
		seen := map[string]bool{}
		var commits, discl int
		for ch := range changes {
			if ch.Kind != crdt.ChangePut || seen[ch.Key] {
				continue
			}
			seen[ch.Key] = true
			switch ch.Record.Type {
			case records.CommitType:
				if commits++; commits == s.microjobs() {
					at[0] = time.Now()
				}
			case records.ResultType:
				if discl++; discl == s.microjobs() {
					at[1] = time.Now()
				}
			}
		}
	}()
	res, err := c.DApp.Wait(ctx, info.ID(), 20*time.Millisecond)
	if err != nil {
		b.Fatalf("job %s: %v after %s, %d blocks run; the client's store: %s", info.ID(), err, time.Since(start).Round(time.Second), exec.calls.Load()-calls, judgeView(m, info))
	}
	wall := time.Since(start)
	wcancel()
	at := <-phases
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: the client's store holds, by type: %v\n", b.Name(), recordTypes(m, info))
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		b.Fatal(err)
	}
	// The public plan holds the regular MicroJobs; the verifiers are
	// drawn from the revealed seed.
	if got, want := plan.NumMicroJobs(), s.macros*int(s.n); got != want {
		b.Fatalf("plan has %d regular MicroJobs, the shape says %d", got, want)
	}
	v := res.Verdict
	if !v.Verified || !v.Complete || len(v.Disputes) != 0 || len(res.Culprits) != 0 {
		b.Fatalf("verdict not clean: verified %v complete %v disputes %d culprits %v", v.Verified, v.Complete, len(v.Disputes), res.Culprits)
	}
	checks, err := c.Store.Query(ctx, records.JobKey(info.ID())+"/check/")
	if err != nil {
		b.Fatal(err)
	}
	r := flowRun{wall: wall, compute: time.Unix(0, exec.last.Load()).Sub(start), blocks: exec.calls.Load() - calls, checks: len(checks)}
	// Zero when the client's store did not see them all before the
	// verdict (it needs only the verdict, not every record).
	if !at[0].IsZero() {
		r.committed = at[0].Sub(start)
	}
	if !at[1].IsZero() {
		r.disclosed = at[1].Sub(start)
	}
	return r
}

// benchFlow runs b.N jobs of shape s on one mesh and reports the
// coordination figures.
func benchFlow(b *testing.B, s flowShape, tu tuning) {
	exec := &waitExec{cost: s.cost}
	start := time.Now()
	m := benchMesh(b, s, tu, exec)
	meshtest.WaitConnected(b, m)
	phase(b, start, "every member has a peer")
	waitAllLive(b, m, s.processors)
	phase(b, start, "every processor sees every processor live")
	if testing.Verbose() {
		defer reportProgress(b, exec)()
	}
	// One untimed job first: the figures are of a mesh in steady state,
	// not of gossipsub meshes and connections still forming.
	runBenchJob(b, m, exec, flowShape{processors: s.processors, macros: 1, n: 2, cost: 0}, -1)
	phase(b, start, "warm-up job done")
	var runs []flowRun
	b.ResetTimer()
	traffic0 := pubsubTraffic(b, m)
	cpu0 := cputime.Process()
	for i := range b.N {
		runs = append(runs, runBenchJob(b, m, exec, s, i))
	}
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	reportHeap(b, len(m.Running()))
	traffic := pubsubTraffic(b, m)
	for k, v := range traffic0 {
		traffic[k] -= v
	}
	nodes := len(m.Running())
	reportFlow(b, s, runs, cpu, cpu0 >= 0)
	reportTraffic(b, s, len(runs), nodes, traffic)
	reportConns(b, m)
	if cpu0 >= 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(runs))/float64(s.microjobs())/float64(nodes), "cpu-ms/microjob/node")
	}
}

// reportHeap reports the Go heap in use after a collection, per node, with
// the mesh still running (every store of the jobs still open); with
// JOBMESH_BENCH_HEAP set it also writes a heap profile to that file.
func reportHeap(b *testing.B, nodes int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20)/float64(nodes), "heap-MB/node")
	if path := os.Getenv("JOBMESH_BENCH_HEAP"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
	}
}

// reportConns reports the connections of the mesh's hosts at the end of
// the runs: the mean and the most of any one host.
func reportConns(b *testing.B, m *localmesh.Mesh) {
	var sum, most int
	members := m.Running()
	for _, mem := range members {
		n := len(mem.Host.Network().Conns())
		sum += n
		most = max(most, n)
	}
	b.ReportMetric(float64(sum)/float64(len(members)), "conns/node")
	b.ReportMetric(float64(most), "conns-max/node")
}

// phase says on stderr, with -test.v, how long after start the mesh
// reached a phase: where a large mesh spends its time forming.
func phase(b *testing.B, start time.Time, what string) {
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: %s after %s\n", b.Name(), what, time.Since(start).Round(100*time.Millisecond))
	}
}

// waitAllLive waits for the steady state: every processor's dispatch view
// holds every processor, as in a mesh that has been up for a while.
func waitAllLive(b *testing.B, m *localmesh.Mesh, processors int) {
	b.Helper()
	// A large mesh's stores take longer to hear every advertisement on a
	// machine of few cores.
	wait.Until(b, time.Minute+time.Duration(processors)*2*time.Second, func() error {
		for _, mem := range m.Running() {
			if mem.Worker == nil {
				continue
			}
			if live := mem.Worker.View().Live(); live != processors {
				return fmt.Errorf("member %d sees %d of %d processors live", mem.Index, live, processors)
			}
		}
		return nil
	})
}

// reportProgress prints the blocks run on stderr every five seconds, to
// see where a slow run spends its time, until the returned stop is called.
func reportProgress(b *testing.B, exec *waitExec) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for start := time.Now(); ; {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintf(os.Stderr, "%s: %s: %d blocks run\n", b.Name(), time.Since(start).Round(time.Second), exec.calls.Load())
			}
		}
	}()
	return cancel
}

// reportFlow reports the runs' mean times, the blocks run and self-checks
// per job, and, when cpuKnown, the process's CPU time per MicroJob.
func reportFlow(b *testing.B, s flowShape, runs []flowRun, cpu time.Duration, cpuKnown bool) {
	var wall, compute, committed, disclosed time.Duration
	var blocks int64
	var checks int
	phases := true // every run saw all commitments and disclosures
	for _, r := range runs {
		wall += r.wall
		compute += r.compute
		committed += r.committed
		disclosed += r.disclosed
		blocks += r.blocks
		checks += r.checks
		phases = phases && r.committed > 0 && r.disclosed > 0
	}
	n := time.Duration(len(runs))
	wall, compute, committed, disclosed = wall/n, compute/n, committed/n, disclosed/n
	mj := float64(s.microjobs())
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: %d runs: wall %s, last block %s, committed %s, disclosed %s, %.3f blocks/MicroJob, CPU %s\n",
			b.Name(), len(runs), wall, compute, committed, disclosed, float64(blocks)/float64(len(runs))/mj, cpu.Round(time.Millisecond))
	}
	b.ReportMetric(mj/wall.Seconds(), "microjobs/s")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(compute.Seconds(), "lastblock-s")
	if phases {
		b.ReportMetric(committed.Seconds(), "committed-s")
		b.ReportMetric(disclosed.Seconds(), "disclosed-s")
	}
	b.ReportMetric(float64(blocks)/float64(len(runs))/mj, "blocks-run/microjob")
	b.ReportMetric(float64(checks)/float64(len(runs)), "self-checks/job")
	if cpuKnown {
		// The whole mesh runs in this process: its CPU time per MicroJob
		// is the coordination's cost, which a busy machine's wall time
		// hides.
		b.ReportMetric(float64(cpu.Milliseconds())/float64(len(runs))/mj, "cpu-ms/microjob")
	}
	if s.cost > 0 {
		// One block per MicroJob, so the ideal is MicroJobs × cost spread
		// over every processor.
		ideal := time.Duration(s.microjobs()) * s.cost / time.Duration(s.processors)
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "overhead-ratio")
		b.ReportMetric(compute.Seconds()/ideal.Seconds(), "compute-phase-ratio")
	}
}

// reportTraffic reports what the mesh's members handled over runs jobs,
// per MicroJob: the work that the CPU figure pays for, without the
// machine's noise. The /node figures divide by the mesh's nodes: what one
// node handles per MicroJob of the job.
func reportTraffic(b *testing.B, s flowShape, runs, nodes int, traffic map[trafficKey]float64) {
	mj := float64(s.microjobs())
	perNode := float64(nodes)
	var delivered, duplicates float64
	for k, v := range traffic {
		per := v / float64(runs) / mj
		switch k.event {
		case "delivered":
			delivered += v
			if k.topic == "crdt" || k.topic == "jobcrdt" || k.topic == "roomcrdt" || k.topic == "job" || k.topic == "macrojob" {
				b.ReportMetric(per, k.topic+"-deliveries/microjob")
				b.ReportMetric(per/perNode, k.topic+"-deliveries/microjob/node")
			}
		case "duplicate":
			duplicates += v
			if k.topic == "crdt" || k.topic == "jobcrdt" || k.topic == "roomcrdt" || k.topic == "job" || k.topic == "macrojob" {
				b.ReportMetric(per/perNode, k.topic+"-duplicates/microjob/node")
			}
		case "kind":
			b.ReportMetric(per/perNode, k.topic+"-deliveries/microjob/node")
		case "writes":
			b.ReportMetric(per, k.topic+"-writes/microjob")
		}
	}
	b.ReportMetric(delivered/float64(runs)/mj, "deliveries/microjob")
	b.ReportMetric(duplicates/float64(runs)/mj, "duplicates/microjob")
	b.ReportMetric(delivered/float64(runs)/mj/perNode, "deliveries/microjob/node")
	b.ReportMetric(duplicates/float64(runs)/mj/perNode, "duplicates/microjob/node")
}

// BenchmarkCoordinationOverhead: a job whose compute is a fixed 50 ms wait
// per block, on an in-process mesh over real sockets. overhead-ratio is
// wall time ÷ (total compute ÷ processors); compute-phase-ratio stops the
// clock at the last block run instead of at the verdict. One iteration is
// one whole job; use -benchtime 1x.
func BenchmarkCoordinationOverhead(b *testing.B) {
	shapes := []struct {
		name string
		s    flowShape
	}{
		// 182 MacroJobs × (10 regular + 1 verifier) = 2,002 MicroJobs.
		{"p20-m2002", flowShape{processors: 20, macros: 182, n: 10, cost: 50 * time.Millisecond}},
		// The same job on 50 and 100 processors: what one node pays as
		// the processors of one job multiply.
		{"p50-m2002", flowShape{processors: 50, macros: 182, n: 10, cost: 50 * time.Millisecond}},
		{"p100-m2002", flowShape{processors: 100, macros: 182, n: 10, cost: 50 * time.Millisecond}},
		// A shorter job, 37 MacroJobs × 11 = 407 MicroJobs, on 20, 50 and
		// 100 processors: the per-node counts where the long job does not
		// finish on 2 cores.
		{"p20-m407", flowShape{processors: 20, macros: 37, n: 10, cost: 50 * time.Millisecond}},
		{"p50-m407", flowShape{processors: 50, macros: 37, n: 10, cost: 50 * time.Millisecond}},
		{"p100-m407", flowShape{processors: 100, macros: 37, n: 10, cost: 50 * time.Millisecond}},
		// 3 MacroJobs × 11 = 33 MicroJobs: a quick point.
		{"p4-m33", flowShape{processors: 4, macros: 3, n: 10, cost: 50 * time.Millisecond}},
		// 37 MacroJobs × 11 = 407 MicroJobs.
		{"p10-m407", flowShape{processors: 10, macros: 37, n: 10, cost: 50 * time.Millisecond}},
	}
	for _, sh := range shapes {
		for _, tu := range tunings {
			b.Run(sh.name+"/"+tu.name, func(b *testing.B) { benchFlow(b, sh.s, tu) })
		}
	}
}

// BenchmarkCoordinationEmptyCompute: MicroJobs coordinated per second by
// 10 processors when a block costs nothing.
func BenchmarkCoordinationEmptyCompute(b *testing.B) {
	for _, s := range []flowShape{
		{processors: 10, macros: 10, n: 10}, // 110 MicroJobs
		{processors: 10, macros: 37, n: 10}, // 407 MicroJobs
	} {
		for _, tu := range tunings {
			b.Run(fmt.Sprintf("p10-m%d/%s", s.microjobs(), tu.name), func(b *testing.B) { benchFlow(b, s, tu) })
		}
	}
}
