package processor_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// dispatchRole is one processor of the dispatch mesh: its card, its
// timeout setting (the QoS timeout score) and its compute cost per block.
type dispatchRole struct {
	card    string
	vram    uint64
	stake   int64 // in minimum stakes
	timeout time.Duration
	cost    time.Duration
}

// dispatchRoles: four "small" processors (8 GiB, 5m timeout, the minimum
// stake) and four "big" ones (24 GiB, 1m timeout, 2500 times the minimum
// stake). Before any job has finished every speed score is equal (B = 1),
// so Q = (2·B + R + P)/4: small Q = (2 + 1/3 + 0)/4 = 7/12, big Q = 1;
// S = √(stake/max stake): small 1/50, big 1; W = S·Q/(S+Q): small 0.0193,
// big 0.5. One big processor is slow: its blocks cost 100 times the
// others'.
var dispatchRoles = []dispatchRole{
	{"small", 8192, 1, 5 * time.Minute, 20 * time.Millisecond},
	{"small", 8192, 1, 5 * time.Minute, 20 * time.Millisecond},
	{"small", 8192, 1, 5 * time.Minute, 20 * time.Millisecond},
	{"small", 8192, 1, 5 * time.Minute, 20 * time.Millisecond},
	{"big", 24576, 2500, time.Minute, 20 * time.Millisecond},
	{"big", 24576, 2500, time.Minute, 20 * time.Millisecond},
	{"big", 24576, 2500, time.Minute, 20 * time.Millisecond},
	{"big", 24576, 2500, time.Minute, 2 * time.Second},
}

const slowRole = 7

// choiceLog records the queue-owner choices of every processor, with the
// weights the chooser used, by wrapping the worker's own chooser.
type choiceLog struct {
	mu      sync.Mutex
	workers map[int]*atomic.Pointer[processor.Worker]
	choices []choice
}

type choice struct {
	cands   []string
	weights []float64
	picked  int
}

type recordingChooser struct {
	log *choiceLog
	w   *atomic.Pointer[processor.Worker]
}

func (r recordingChooser) Choose(cands []macrojob.PeerID, seed []byte) int {
	w := r.w.Load()
	if w == nil {
		return macrojob.SeededChooser{}.Choose(cands, seed)
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = string(c)
	}
	weights := w.SelectionWeights(ids)
	i := w.Chooser().Choose(cands, seed)
	r.log.mu.Lock()
	r.log.choices = append(r.log.choices, choice{ids, weights, i})
	r.log.mu.Unlock()
	return i
}

func dispatchMesh(t *testing.T, log *choiceLog) *localmesh.Mesh {
	t.Helper()
	role := func(m *localmesh.Member) dispatchRole { return dispatchRoles[m.Index-1] }
	return meshtest.New(t, localmesh.Options{
		Processors: len(dispatchRoles),
		Clients:    1,
		Chain:      &localmesh.ChainOptions{Deploy: dispatchDeploy()},
		Configure: func(m *localmesh.Member, cfg *node.Config) {
			if m.Index < 1 || m.Index > len(dispatchRoles) {
				return
			}
			r := role(m)
			cfg.Processor.CardModel, cfg.Processor.VRAMMiB = r.card, r.vram
			cfg.Processor.ProcessTimeout = node.Duration(r.timeout)
			// A cap of ⌊0.75·8⌋ = 6 queued processor slots (queueGroups).
			cfg.Dispatch.QueueAlpha = 0.75
			cfg.Dispatch.MinQueueLen = 1
		},
		Processor: func(m *localmesh.Member, pc *processor.Config) {
			testTimeouts(pc)
			pc.DiscloseGrace = 3 * time.Second
			pc.FundingBackoff = 200 * time.Millisecond
			pc.StakeTTL = time.Second
			pc.FactsEvery = 300 * time.Millisecond
			pc.Exec = &waitExec{cost: role(m).cost}
			wp := &atomic.Pointer[processor.Worker]{}
			log.mu.Lock()
			log.workers[m.Index] = wp
			log.mu.Unlock()
			pc.Room.Queue.Chooser = recordingChooser{log, wp}
			// One MicroJob per ownership turn: the test counts weighted
			// handoffs, and a turn of three makes fewer of them.
			pc.Room.Queue.MaxLocksPerTurn = 1
		},
	})
}

// dispatchSpec is macros MacroJobs of n one-block MicroJobs (and a
// verifier each).
func dispatchSpec(seq int, macros, n uint32, req jobs.Requirements) dapp.Spec {
	data := make([]byte, 8*n*macros)
	for i := range n * macros {
		binary.BigEndian.PutUint32(data[8*i:], uint32(seq))
		binary.BigEndian.PutUint32(data[8*i+4:], i)
	}
	return dapp.Spec{
		Code: minimalWasm, Data: data,
		Slicing:      jobs.Slicing{BlockSize: 8, MicroJobs: n, BlocksPerMicro: 1, VerifierBlocks: 1},
		Price:        big.NewInt(1_000_000_000), // the creator: the client's wallet
		Deadline:     time.Now().Add(time.Hour),
		Output:       jobs.Output{Kind: jobs.OutputConcat},
		Requirements: req,
	}
}

// commitsBy counts the job's commitments per processor in the client's
// store.
func commitsBy(t *testing.T, m *localmesh.Mesh, id jobs.ID) map[string]int {
	t.Helper()
	recs, err := client(m).Store.Query(context.Background(), records.JobKey(id)+"/")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range recs {
		if r.Type == records.CommitType {
			out[r.Author.String()]++
		}
	}
	return out
}

// dispatchDeploy is the escrow with a small minimum stake, so that a big
// processor's wallet can hold 2500 of them.
func dispatchDeploy() escrow.DeployParams {
	p := escrow.DefaultDeployParams()
	p.MinStake = big.NewInt(1e15)
	return p
}

// stakeAndWait tops every processor's stake up to its role's, and waits
// until every processor's view holds all processors live with those
// stakes.
func stakeAndWait(t *testing.T, m *localmesh.Mesh) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	minStake := dispatchDeploy().MinStake
	procs := processorsOf(m)
	for i, p := range procs {
		if extra := dispatchRoles[i].stake - 1; extra > 0 {
			if _, err := p.Escrow.Stake(ctx, new(big.Int).Mul(minStake, big.NewInt(extra))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range procs {
		ready := func() bool {
			v := p.Worker.View()
			if v.Live() != len(dispatchRoles) {
				return false
			}
			for i, q := range procs {
				pv, ok := v.Processor(q.Host.ID().String())
				want := new(big.Int).Mul(minStake, big.NewInt(dispatchRoles[i].stake))
				if !ok || pv.Stake == nil || pv.Stake.Cmp(want) != 0 {
					return false
				}
			}
			return true
		}
		if err := waitFor(ctx, ready); err != nil {
			t.Fatalf("processor %d does not see every processor live with its stake: %d live", p.Index, p.Worker.View().Live())
		}
	}
}

// checkDocumentedWeights checks that view v weighs every processor of
// dispatchRoles as documented there; peer names the i-th processor.
func checkDocumentedWeights(t *testing.T, v *meshview.View, peer func(int) string) {
	t.Helper()
	for i, r := range dispatchRoles {
		p, ok := v.Processor(peer(i))
		if !ok {
			t.Fatalf("processor %d not live", i)
		}
		want := 0.5
		if r.card == "small" {
			s, q := 0.02, 7.0/12
			want = s * q / (s + q)
		}
		if d := p.Weight - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("processor %d (%s) weighs %v, want %v", i, r.card, p.Weight, want)
		}
	}
}

// contested sums up the logged choices between the classes: big are the
// peers of one class. It returns how many handoffs had candidates of
// both classes with weight, how often the big class was picked, and the
// number W predicts (Σp) with its variance (Σp(1-p)).
func (l *choiceLog) contested(big map[string]bool) (n int, got, expect, variance float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.choices {
		var sum, bigSum float64
		for i, w := range c.weights {
			sum += w
			if big[c.cands[i]] {
				bigSum += w
			}
		}
		if len(c.cands) < 2 || sum == 0 {
			continue
		}
		p := bigSum / sum
		if p == 0 || p == 1 {
			continue // no choice between the classes
		}
		n++
		expect += p
		variance += p * (1 - p)
		if big[c.cands[c.picked]] {
			got++
		}
	}
	return n, got, expect, variance
}

// TestDispatchLiveMesh runs 8 processors of two card models with
// different QoS on one mesh:
//
//	(b) a job requiring the "big" model runs only on big processors;
//	(a) in a job all eight contend for, the big processors, which weigh
//	    more, take more MicroJobs than the small ones;
//	(c) the slow processor's share falls below half its fast peers';
//	(d) an R = 3 job and R = 1 jobs share the queue as seed 001's groups
//	    say (queueGroups).
func TestDispatchLiveMesh(t *testing.T) {
	log := &choiceLog{workers: map[int]*atomic.Pointer[processor.Worker]{}}
	m := dispatchMesh(t, log)
	procs := processorsOf(m)
	for _, p := range procs {
		log.workers[p.Index].Store(p.Worker)
	}
	stakeAndWait(t, m)
	peer := func(i int) string { return procs[i].Host.ID().String() }

	// The weights every processor computes are the documented ones.
	checkDocumentedWeights(t, procs[0].Worker.View(), peer)

	// (b) A GPU-model job runs only on that model.
	info, res := runJob(t, m, dispatchSpec(1, 1, 12, jobs.Requirements{GPUModel: "big"}), 3*time.Minute)
	checkComplete(t, info, res)
	for who, n := range commitsBy(t, m, info.ID()) {
		for i := range procs {
			if peer(i) == who && dispatchRoles[i].card != "big" {
				t.Errorf("processor %d (%s) committed %d MicroJobs of a job requiring \"big\"", i, dispatchRoles[i].card, n)
			}
		}
	}

	// (a) and (c): one job everyone contends for.
	const macros, n = 1, 64
	info, res = runJob(t, m, dispatchSpec(2, macros, n, jobs.Requirements{}), 3*time.Minute)
	checkComplete(t, info, res)
	counts := commitsBy(t, m, info.ID())
	var small, big, total int
	perProc := make([]int, len(procs))
	big4 := map[string]bool{}
	for i, r := range dispatchRoles {
		c := counts[peer(i)]
		total += c
		perProc[i] = c
		if r.card == "big" {
			big4[peer(i)] = true
		}
		switch {
		case i == slowRole:
		case r.card == "small":
			small += c
		default:
			big += c
		}
	}
	t.Logf("MicroJobs committed: %v", perProc)
	if total < macros*(n+1) {
		t.Fatalf("%d commitments, want at least %d", total, macros*(n+1))
	}
	// (a) Shares: the queue weighs requesters only when several wait at
	// one handoff, so MicroJob counts follow W only as far as requesters
	// contend (logged, not asserted: runs gave the big processors from
	// equal to 7 times the small ones' counts). What W decides is each
	// contested handoff: over all of them, the number of big processors
	// picked must be within 4 standard deviations of the number W
	// predicts (Σp, variance Σp(1-p)), and there must be enough of them
	// to tell (the small ones weigh 26 times less).
	smallMean, bigMean := float64(small)/4, float64(big)/3
	t.Logf("mean MicroJobs: big %.1f, small %.1f", bigMean, smallMean)
	contested, got, expect, variance := log.contested(big4)
	// How many handoffs are contested follows timing: while too few were,
	// more jobs that everyone contends for add theirs.
	for seq := 50; contested < 10 && seq < 53; seq++ {
		t.Logf("%d handoffs between classes so far; one more job", contested)
		info, res := runJob(t, m, dispatchSpec(seq, macros, n, jobs.Requirements{}), 3*time.Minute)
		checkComplete(t, info, res)
		contested, got, expect, variance = log.contested(big4)
	}
	t.Logf("%d handoffs between classes: big picked %v times, W predicts %.1f ± %.1f", contested, got, expect, math.Sqrt(variance))
	if contested < 10 {
		t.Errorf("only %d handoffs chose between big and small processors", contested)
	}
	if d := math.Abs(got - expect); d > 4*math.Sqrt(variance)+0.5 {
		t.Errorf("big processors picked %v times in %d contested handoffs, W predicts %.1f ± %.1f", got, contested, expect, math.Sqrt(variance))
	}
	if slow := float64(counts[peer(slowRole)]); slow >= bigMean/2 {
		t.Errorf("the slow processor took %v MicroJobs, its fast peers of the same weight %.1f each: want under half", slow, bigMean)
	}
	queueGroups(t, m, peer)
}

// queueGroups checks seed 001's queue groups with replicas on the live
// mesh (cap 6 slots, dispatchMesh):
//
//   - an R = 3 job runs on 3 processors of one card model that can serve
//     it, and only on them;
//   - an R = 3 job no card model has 3 processors for waits, with no
//     commitment, while a later R = 1 job of lower task value runs: the
//     better head of a group nobody can take blocks no other group;
//   - eviction counts the waiting job's 3 slots: with it and four 1-node
//     jobs of higher value (5 jobs, 7 slots) the waiting job, the lowest
//     value, is aborted and the 1-node jobs stay.
func queueGroups(t *testing.T, m *localmesh.Mesh, peer func(int) string) {
	t.Helper()
	card := map[string]string{}
	for i, r := range dispatchRoles {
		card[peer(i)] = r.card
	}
	info, res := runJob(t, m, withPrice(dispatchSpec(3, 1, 3, jobs.Requirements{GPUModel: "big", Replicas: 3}), 2e9), 3*time.Minute)
	checkComplete(t, info, res)
	group := commitsBy(t, m, info.ID())
	if len(group) != 3 {
		t.Errorf("the R = 3 job was run by %d processors, want 3: %v", len(group), group)
	}
	for who := range group {
		if card[who] != "big" {
			t.Errorf("processor %s (%s) ran the R = 3 job requiring \"big\"", who, card[who])
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client(m)
	submit := func(spec dapp.Spec) jobs.ID {
		t.Helper()
		info, err := c.DApp.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return info.ID()
	}
	// 32 GiB: no card model has 3 processors for it.
	waiting := submit(withPrice(dispatchSpec(4, 1, 3, jobs.Requirements{MinVRAMMiB: 32768, Replicas: 3}), 3e9))
	info, res = runJob(t, m, withPrice(dispatchSpec(5, 1, 3, jobs.Requirements{}), 1e9), 3*time.Minute)
	checkComplete(t, info, res)
	if n := commitsBy(t, m, waiting); len(n) != 0 {
		t.Errorf("the R = 3 job nobody can group has commitments: %v", n)
	}

	var later []jobs.ID
	for i := range 4 {
		later = append(later, submit(withPrice(dispatchSpec(6+i, 1, 3, jobs.Requirements{GPUModel: "nobody-has-it"}), 4e9)))
	}
	if err := waitFor(ctx, func() bool {
		_, err := records.ReadAborted(ctx, c.Store, waiting)
		return err == nil
	}); err != nil {
		t.Fatalf("the waiting R = 3 job is not evicted: %v", err)
	}
	for _, id := range later {
		if _, err := records.ReadAborted(ctx, c.Store, id); !errors.Is(err, records.ErrNotAborted) {
			t.Errorf("1-node job %s: %v, want ErrNotAborted", id, err)
		}
	}
}

// withPrice is spec with its price set to wei.
func withPrice(spec dapp.Spec, wei float64) dapp.Spec {
	spec.Price, _ = big.NewFloat(wei).Int(nil)
	return spec
}
