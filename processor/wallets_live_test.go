package processor_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestLiarClaimingAnHonestWalletFramesNobody: a byzantine processor (its
// outputs tampered, as the demo's --byzantine) writes an honest,
// staked processor's wallet in the records of every other MicroJob it
// runs, its own in the rest. The honest processor is stopped before the
// job, so it is neither paid nor working: a settlement that slashed the
// wallets culprits claim would burn its stake. The claims are left out
// of judging and counted; the settlement names no culprit but the liar's
// own bound wallet, pays neither the liar nor the claimed wallet, and the
// honest stake is intact on the chain. Four honest processors stay up,
// so that a dispute with the liar has three live re-runners: their votes
// give the honest side the lead of 2 an exhausted order needs even with
// the stopped one's silence counted against it.
func TestLiarClaimingAnHonestWalletFramesNobody(t *testing.T) {
	const liarIndex, victimIndex = 2, 4
	var (
		m          *localmesh.Mesh
		runs       atomic.Int32
		claims     atomic.Int32
		ownRecords atomic.Int32
	)
	liar := liarTune(&m, liarIndex)
	m = chainMesh(t, 6, func(mem *localmesh.Member, pc *processor.Config) {
		liar(mem, pc)
		pc.DiscloseGrace = time.Second
		pc.RerunTimeout = 5 * time.Second // the stopped processor may be drawn to re-run
		if mem.Index != liarIndex {
			return
		}
		pc.ClaimWallet = func(jobs.ID) string {
			if runs.Add(1)%2 == 0 {
				ownRecords.Add(1)
				return ""
			}
			claims.Add(1)
			return strings.ToLower(m.Members[victimIndex].Wallet.Hex())
		}
	})
	ctx := context.Background()
	victimWallet, liarWallet := m.Members[victimIndex].Wallet, m.Members[liarIndex].Wallet
	before, err := m.Escrow.StakeOf(ctx, victimWallet)
	if err != nil {
		t.Fatal(err)
	}
	if before.Active.Sign() == 0 {
		t.Fatal("the honest processor has no stake to lose")
	}
	if err := m.Stop(victimIndex); err != nil {
		t.Fatal(err)
	}

	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	if claims.Load() == 0 {
		t.Fatal("the liar ran no MicroJob: nothing was claimed")
	}
	t.Logf("the liar claimed the honest wallet in %d MicroJobs, its own in %d", claims.Load(), ownRecords.Load())
	for _, r := range res.Verdict.Results {
		if common.HexToAddress(r.Wallet) == victimWallet {
			t.Fatalf("the verdict credits the claimed wallet: %+v", r)
		}
	}
	rec, err := client(m).Store.Get(ctx, records.SettlementKey(info.ID()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := records.DecodeSettlementRecord(rec.Payload)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Culprits {
		if c != liarWallet {
			t.Fatalf("settlement culprits %v: %s is not the liar's bound wallet %s", s.Culprits, c, liarWallet)
		}
	}
	if slices.Contains(res.Release.Payees, victimWallet) || slices.Contains(res.Release.Payees, liarWallet) {
		t.Fatalf("payees %v include the claimed wallet or the liar", res.Release.Payees)
	}
	after, err := m.Escrow.StakeOf(ctx, victimWallet)
	if err != nil {
		t.Fatal(err)
	}
	if after.Active.Cmp(before.Active) != 0 || after.Pending.Sign() != 0 {
		t.Fatalf("the honest stake went from %v to %v active, %v pending", before.Active, after.Active, after.Pending)
	}
	var leftOut float64
	for _, mem := range processorsOf(m) {
		leftOut += counterSum(t, mem.Metrics, "jobmesh_processor_unbound_wallets_total", "record", "disclosure")
	}
	if leftOut == 0 {
		t.Fatal("no processor left a disclosure claiming the honest wallet out")
	}
	if ownRecords.Load() == 0 {
		return // every record the liar wrote claimed the other wallet
	}
	// It lied under its own wallet too: caught, and slashed through it.
	if !slices.Contains(res.Culprits, m.Members[liarIndex].Host.ID().String()) || !slices.Equal(s.Culprits, []common.Address{liarWallet}) {
		t.Fatalf("verdict culprits %v, settlement culprits %v: want the liar and its wallet", res.Culprits, s.Culprits)
	}
	slashed, err := m.Escrow.StakeOf(ctx, liarWallet)
	if err != nil {
		t.Fatal(err)
	}
	if slashed.Active.Sign() != 0 {
		t.Fatalf("the liar keeps %v staked", slashed.Active)
	}
}
