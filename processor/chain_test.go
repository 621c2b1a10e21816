package processor_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/escrow/bindings"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// chainMesh is flowMesh with the embedded chain.
func chainMesh(t *testing.T, processors int, tune func(m *localmesh.Member, pc *processor.Config)) *localmesh.Mesh {
	t.Helper()
	return meshtest.New(t, localmesh.Options{
		Processors: processors,
		Clients:    1,
		Chain:      &localmesh.ChainOptions{},
		Processor: func(m *localmesh.Member, pc *processor.Config) {
			testTimeouts(pc)
			pc.FundingBackoff = 200 * time.Millisecond
			if tune != nil {
				tune(m, pc)
			}
		},
	})
}

// releases counts the EscrowReleased events of a job on the mesh's chain.
func releases(t *testing.T, m *localmesh.Mesh, id jobs.ID) int {
	t.Helper()
	parsed, err := bindings.EscrowMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m.Chain.Client().FilterLogs(context.Background(), ethereum.FilterQuery{
		FromBlock: big.NewInt(0),
		Addresses: []common.Address{m.Escrow.Address()},
		Topics:    [][]common.Hash{{parsed.Events["EscrowReleased"].ID}, {escrow.JobKey(client(m).Wallet, common.Hash(id))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(logs)
}

// checkRelease checks the invariants of a settled job: value conserved,
// every payee credited in the verdict and paid into its credit, the
// transaction successful, exactly one release.
func checkRelease(t *testing.T, m *localmesh.Mesh, info *jobs.JobInfo, res dapp.Result) {
	t.Helper()
	rel := res.Release
	if rel == nil {
		t.Fatal("no release on a mesh with a chain")
	}
	total := new(big.Int).Set(rel.Refund)
	for _, a := range rel.Amounts {
		total.Add(total, a)
	}
	if total.Cmp(info.PriceWei) != 0 {
		t.Fatalf("payouts + refund = %v, price %v", total, info.PriceWei)
	}
	culprit := map[string]bool{}
	for _, c := range res.Culprits {
		culprit[c] = true
	}
	credited := map[common.Address]bool{}
	for _, r := range res.Verdict.Results {
		if !culprit[r.Processor] {
			credited[common.HexToAddress(r.Wallet)] = true
		}
	}
	if len(rel.Payees) != len(credited) {
		t.Fatalf("%d payees, %d credited wallets", len(rel.Payees), len(credited))
	}
	ctx := context.Background()
	for i, p := range rel.Payees {
		if !credited[p] {
			t.Fatalf("payee %s has no credited result", p)
		}
		if rel.Amounts[i].Sign() <= 0 {
			t.Fatalf("payee %s gets %v", p, rel.Amounts[i])
		}
		credit, err := m.Escrow.CreditOf(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if credit.Cmp(rel.Amounts[i]) != 0 {
			t.Fatalf("payee %s credit %v, payout %v", p, credit, rel.Amounts[i])
		}
	}
	rcpt, err := m.Chain.Client().TransactionReceipt(ctx, rel.TxHash)
	if err != nil {
		t.Fatal(err)
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("settle transaction %s failed", rel.TxHash)
	}
	if n := releases(t, m, info.ID()); n != 1 {
		t.Fatalf("%d EscrowReleased events, want 1", n)
	}
	j, err := m.Escrow.Job(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())))
	if err != nil {
		t.Fatal(err)
	}
	if j.State != escrow.JobSettled {
		t.Fatalf("job is %s on chain", j.State)
	}
}

func counterSum(t *testing.T, reg prometheus.Gatherer, name string, label ...string) float64 {
	t.Helper()
	sum, err := gatheredSum(reg, name, label...)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// gatheredSum is the sum of counter name's series that carry every
// label pair of label (name, value, ...); it needs no *testing.T, so a
// processor's hook may call it.
func gatheredSum(reg prometheus.Gatherer, name string, label ...string) (float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(label); i += 2 {
				found := false
				for _, l := range m.GetLabel() {
					found = found || (l.GetName() == label[i] && l.GetValue() == label[i+1])
				}
				if !found {
					continue metric
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum, nil
}

func processorsOf(m *localmesh.Mesh) []*localmesh.Member {
	var out []*localmesh.Member
	for _, mem := range m.Running() {
		if mem.Role == node.RoleProcessor {
			out = append(out, mem)
		}
	}
	return out
}

func TestJobSettlesOnChain(t *testing.T) {
	m := chainMesh(t, 4, nil)
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 3*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	checkSpeedSplit(t, m, info, res)
	wallets := map[common.Address]bool{}
	for _, mem := range processorsOf(m) {
		wallets[mem.Wallet] = true
	}
	for _, p := range res.Release.Payees {
		if !wallets[p] {
			t.Fatalf("payee %s is no processor's wallet", p)
		}
	}
	var submitted float64
	for _, mem := range processorsOf(m) {
		submitted += counterSum(t, mem.Metrics, "jobmesh_processor_settlements_total", "outcome", "submitted")
	}
	if submitted != 1 {
		t.Fatalf("%v settle transactions submitted, want 1", submitted)
	}
}

func TestCulpritIsNotPaidAndIsSlashed(t *testing.T) {
	const liarIndex = 2
	var m *localmesh.Mesh
	m = chainMesh(t, 4, liarTune(&m, liarIndex))
	liar := m.Members[liarIndex]
	ctx := context.Background()
	before, err := m.Escrow.StakeOf(ctx, liar.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if before.Active.Sign() == 0 {
		t.Fatal("the liar has no stake to slash")
	}
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	if len(res.Culprits) != 1 || res.Culprits[0] != liar.Host.ID().String() {
		t.Fatalf("culprits %v, want the liar", res.Culprits)
	}
	checkRelease(t, m, info, res)
	for _, p := range res.Release.Payees {
		if p == liar.Wallet {
			t.Fatal("the liar is paid")
		}
	}
	after, err := m.Escrow.StakeOf(ctx, liar.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if after.Active.Sign() != 0 || after.Pending.Sign() != 0 {
		t.Fatalf("the liar's stake is %v active, %v pending after settling", after.Active, after.Pending)
	}
	burned, err := m.Escrow.TotalBurned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if burned.Cmp(before.Active) != 0 {
		t.Fatalf("burned %v, the liar staked %v", burned, before.Active)
	}
	credit, err := m.Escrow.CreditOf(ctx, liar.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if credit.Sign() != 0 {
		t.Fatalf("the liar has credit %v", credit)
	}
}

func TestProcessorsRefuseUnfundedJob(t *testing.T) {
	m := chainMesh(t, 3, nil)
	job := newMandelbrot(t, 192, 160, 32)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec := job.spec(3, 4)
	spec.FundLater = true
	spec.Creator = "" // the client's wallet
	c := client(m)
	info, err := c.DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if common.Address(info.Creator) != c.Wallet {
		t.Fatalf("creator %x, the client's wallet is %s", info.Creator, c.Wallet)
	}
	// Every processor looks at the job and skips it, twice (the second
	// time after its backoff).
	for _, mem := range processorsOf(m) {
		if err := waitFor(ctx, func() bool {
			return counterSum(t, mem.Metrics, "jobmesh_processor_unfunded_skips_total") >= 2
		}); err != nil {
			t.Fatalf("processor %d never checked the job's escrow", mem.Index)
		}
	}
	for _, mem := range processorsOf(m) {
		if n := counterSum(t, mem.Metrics, "jobmesh_processor_microjobs_total"); n != 0 {
			t.Fatalf("processor %d ran %v MicroJobs of an unfunded job", mem.Index, n)
		}
		recs, err := mem.Store.Query(ctx, records.JobKey(info.ID())+"/")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Type == records.CommitType {
				t.Fatalf("a commitment for an unfunded job: %s", r.Key)
			}
		}
	}
	if err := c.DApp.Fund(ctx, info); err != nil {
		t.Fatal(err)
	}
	res, err := c.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
}

func TestPayeeSubmitsWhenFinalizersDoNot(t *testing.T) {
	var mu sync.Mutex
	steppedIn := map[string]bool{} // processors that stepped in after SettleFallback
	m := chainMesh(t, 3, func(mem *localmesh.Member, pc *processor.Config) {
		pc.SettleFallback = time.Second
		pc.BeforeSettle = func(_ jobs.ID, fallback bool) bool {
			if !fallback {
				return false // the finalizers do not submit at once
			}
			mu.Lock()
			steppedIn[mem.Host.ID().String()] = true
			mu.Unlock()
			return true
		}
	})
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 3*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var submitter string
	c := client(m)
	if err := waitFor(ctx, func() bool {
		rec, err := c.Store.Get(ctx, records.SettledKey(info.ID()))
		if err != nil {
			return false
		}
		r, err := records.DecodeSettledRecord(rec.Payload, rec.Author.String())
		submitter = r.Submitter
		return err == nil
	}); err != nil {
		t.Fatal("no settled record")
	}
	mu.Lock()
	defer mu.Unlock()
	if !steppedIn[submitter] {
		t.Fatalf("settled by %s, which did not step in after the fallback wait (%v)", submitter, steppedIn)
	}
}
