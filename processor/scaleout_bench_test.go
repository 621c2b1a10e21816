package processor_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/cpuprof"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// scaleSets is how many sets of processors the scale-out mesh has, each
// with a card model of its own; every set has scaleSetSize processors.
const (
	scaleSets    = 5
	scaleSetSize = 4
)

// scaleModel is set j's card model.
func scaleModel(j int) string { return fmt.Sprintf("scale-set-%d", j) }

// scaleSet is the set of a processor member (members 1 to 20), or -1
// for a member that is no processor.
func scaleSet(mem *localmesh.Member) int {
	if mem.Role != node.RoleProcessor {
		return -1
	}
	return (mem.Index - 1) % scaleSets
}

// BenchmarkScaleOut runs M = 1, 2 and 4 jobs at once on one in-process
// mesh of 20 processors in five sets of four (sockets on 127.0.0.1, job
// stores on, no chain). Each set has a card model of its own and job j
// asks for set j's, so it runs on set j alone; the processors of the
// other sets are its bystanders (the fifth set is one in every run). A
// job is 40 MacroJobs of 10 + 1 MicroJobs (440) of 50 ms each. The mesh's CPU is split by member with a
// CPU profile (each member's goroutines carry its pprof label). Reported,
// for the timed jobs, as means over the processors of each kind:
//   - cpu-ms/microjob/participant: a processor's CPU per MicroJob of the
//     job it runs;
//   - cpu-ms/microjob/bystander: a processor of a set that has never had
//     a job: its CPU per MicroJob the mesh ran, and
//     cpu-ms/microjob/bystander-over-idle the same less what it spends
//     idle (measured for 10 s before the jobs, with no job running);
//   - bystander/participant-cpu: the bystander's CPU over idle over the
//     participant's;
//   - store-B/job/bystander: a bystander's datastore growth (keys and
//     values of every layer) per job the mesh ran, blocks-B/job/bystander
//     the part of it in the block layer (the store's deltas), and
//     store-B/microjob/participant a participant's per MicroJob it ran;
//   - dht-requests/mesh-job/participant and .../bystander: DHT requests
//     the node answered (jobmesh_p2p_dht_requests_total) per job the mesh
//     ran;
//   - deliveries/microjob/participant and deliveries/microjob/bystander,
//     with the bystanders' by topic kind: pubsub messages handed to the
//     node per MicroJob (of its job; of the mesh);
//   - cpu-unlabelled-share: the CPU no member's goroutine spent (the
//     runtime's background GC, the benchmark itself);
//   - microjobs/s: the mesh's MicroJobs over the run's wall time.
//
// Run with -benchtime 1x (one run of M jobs per sub-benchmark) and
// without -cpuprofile (the benchmark takes the process's CPU profile).
func BenchmarkScaleOut(b *testing.B) {
	for _, jobsAtOnce := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("m%d", jobsAtOnce), func(b *testing.B) { benchScaleOut(b, jobsAtOnce) })
	}
}

func benchScaleOut(b *testing.B, jobsAtOnce int) {
	shape := flowShape{processors: scaleSets * scaleSetSize, macros: 40, n: 10, cost: 50 * time.Millisecond}
	exec := &waitExec{cost: shape.cost}
	start := time.Now()
	m := benchMeshWith(b, shape, tunings[0], exec, func(mem *localmesh.Member, cfg *node.Config) {
		cfg.Store.JobStores = node.JobStoresOn
		if j := scaleSet(mem); j >= 0 {
			cfg.Processor.CardModel = scaleModel(j)
		}
	})
	meshtest.WaitConnected(b, m)
	waitAllLive(b, m, shape.processors)
	phase(b, start, "every processor sees every processor live")
	// One untimed job on each set the run uses: its rooms and stores have
	// run once. The other sets have never had a job.
	runScaleJobs(b, m, flowShape{processors: shape.processors, macros: 1, n: 2}, jobsAtOnce, -1)
	phase(b, start, "warm-up jobs done")

	ctx := context.Background()
	type counts struct {
		store, blocks int64
		traffic       map[trafficKey]float64
		dht           float64
	}
	read := func() map[int]counts {
		out := map[int]counts{}
		for _, mem := range m.Running() {
			n, err := mem.DatastoreBytes(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			blocks, err := mem.DatastoreBytes(ctx, "/blocks")
			if err != nil {
				b.Fatal(err)
			}
			c := counts{store: n, blocks: blocks, traffic: map[trafficKey]float64{}, dht: memberDHTRequests(b, mem)}
			memberTraffic(b, mem, c.traffic)
			out[mem.Index] = c
		}
		return out
	}
	// The idle baseline: what each node spends with no job at all
	// (adverts, store re-announcements, gossip heartbeats), measured for
	// a fixed window in the same run; the bystanders' figures above idle
	// subtract it.
	idle, idleWall := scaleProfile(b, func() { <-time.After(scaleIdleWindow) })

	before := read()
	b.ResetTimer()
	cpu, wall := scaleProfile(b, func() {
		for i := range b.N {
			runScaleJobs(b, m, shape, jobsAtOnce, i)
		}
	})
	b.StopTimer()
	after := read()

	runs := float64(b.N)
	own := runs * float64(shape.microjobs()) // MicroJobs a participant's job ran
	all := own * float64(jobsAtOnce)         // MicroJobs the mesh ran
	var part, by struct {
		n                                        int
		cpu, overIdle, store, blocks, deliv, dht float64
		topics                                   map[string]float64
	}
	by.topics = map[string]float64{}
	var total time.Duration
	for _, d := range cpu {
		total += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, mem := range m.Running() {
		j := scaleSet(mem)
		if j < 0 {
			continue
		}
		label := strconv.Itoa(mem.Index)
		c := cpu[label]
		store := float64(after[mem.Index].store - before[mem.Index].store)
		blocks := float64(after[mem.Index].blocks - before[mem.Index].blocks)
		dht := after[mem.Index].dht - before[mem.Index].dht
		var delivered float64
		topics := map[string]float64{}
		for k, v := range after[mem.Index].traffic {
			if k.event == "delivered" {
				d := v - before[mem.Index].traffic[k]
				delivered += d
				topics[k.topic] += d
			}
		}
		if j < jobsAtOnce {
			part.n++
			part.cpu += ms(c) / own
			part.store += store / own
			part.deliv += delivered / own
			part.dht += dht / (runs * float64(jobsAtOnce))
			continue
		}
		by.n++
		by.cpu += ms(c) / all
		by.overIdle += (ms(c) - ms(idle[label])*wall.Seconds()/idleWall.Seconds()) / all
		by.store += store / (runs * float64(jobsAtOnce))
		by.blocks += blocks / (runs * float64(jobsAtOnce))
		by.deliv += delivered / all
		by.dht += dht / (runs * float64(jobsAtOnce))
		for t, d := range topics {
			by.topics[t] += d / all
		}
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: CPU by member %v; idle for %s: %v\n", b.Name(), cpu, idleWall.Round(time.Millisecond), idle)
	}
	pn := float64(part.n)
	b.ReportMetric(part.cpu/pn, "cpu-ms/microjob/participant")
	b.ReportMetric(part.store/pn, "store-B/microjob/participant")
	b.ReportMetric(part.deliv/pn, "deliveries/microjob/participant")
	b.ReportMetric(part.dht/pn, "dht-requests/mesh-job/participant")
	if by.n > 0 {
		bn := float64(by.n)
		b.ReportMetric(by.cpu/bn, "cpu-ms/microjob/bystander")
		b.ReportMetric(by.overIdle/bn, "cpu-ms/microjob/bystander-over-idle")
		b.ReportMetric(by.overIdle/bn/(part.cpu/pn), "bystander/participant-cpu")
		b.ReportMetric(by.store/bn, "store-B/job/bystander")
		b.ReportMetric(by.blocks/bn, "blocks-B/job/bystander")
		b.ReportMetric(by.deliv/bn, "deliveries/microjob/bystander")
		b.ReportMetric(by.dht/bn, "dht-requests/mesh-job/bystander")
		for _, t := range []string{"crdt", "jobcrdt", "roomcrdt", "jobs", "job", "macrojob"} {
			b.ReportMetric(by.topics[t]/bn, t+"-deliveries/microjob/bystander")
		}
	}
	if total > 0 {
		b.ReportMetric(float64(cpu[""])/float64(total), "cpu-unlabelled-share")
	}
	b.ReportMetric(all/wall.Seconds(), "microjobs/s")
}

// scaleIdleWindow is how long BenchmarkScaleOut measures the idle mesh.
const scaleIdleWindow = 10 * time.Second

// scaleProfile runs f under a CPU profile and returns the CPU it took by
// member label and its wall time.
func scaleProfile(b *testing.B, f func()) (map[string]time.Duration, time.Duration) {
	b.Helper()
	prof, err := cpuprof.Start(localmesh.MemberLabel)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	f()
	wall := time.Since(start)
	cpu, err := prof.Stop()
	if err != nil {
		b.Fatal(err)
	}
	return cpu, wall
}

// runScaleJobs submits one job of shape s to each of the first sets sets
// at once and waits until every one is verified.
func runScaleJobs(b *testing.B, m *localmesh.Mesh, s flowShape, sets, seq int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(sets*s.microjobs())*300*time.Millisecond)
	defer cancel()
	c := client(m)
	var ids []jobs.ID
	for j := range sets {
		spec := benchSpec(s, 1000*(seq+2)+j)
		spec.Requirements = jobs.Requirements{GPUModel: scaleModel(j)}
		info, err := c.DApp.Submit(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, info.ID())
	}
	for j, id := range ids {
		res, err := c.DApp.Wait(ctx, id, 20*time.Millisecond)
		if err != nil {
			b.Fatalf("set %d's job %s: %v", j, id, err)
		}
		if v := res.Verdict; !v.Verified || !v.Complete || len(res.Culprits) != 0 {
			b.Fatalf("set %d's job: verified %v complete %v culprits %v", j, v.Verified, v.Complete, res.Culprits)
		}
	}
}
