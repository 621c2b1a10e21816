package processor_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// TestDeriveSettlementBySpeed: with rounds, each credited result earns
// FeeBasePoints + its processor's task score in its MacroJob. p1 (wallet
// 1) was first in both rounds of MacroJob 0; wallet 0 holds p0's results
// (second in MacroJob 0, alone in MacroJob 1) and p3's (third committer,
// last discloser); the culprit p2 earns nothing.
func TestDeriveSettlementBySpeed(t *testing.T) {
	info, rec, v := recordstest.SpeedFixture(t)
	cfg := dispatch.DefaultConfig()
	s, err := processor.DeriveSettlement(cfg, info, rec, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Wallet 0: p0 once in MacroJob 0 (10 + 5 + 5) and twice in
	// MacroJob 1 (2 × (10 + 10 + 10)), p3 once (10 + 2 + 0): 92.
	// Wallet 1: p1 twice in MacroJob 0, 2 × (10 + 10 + 10) = 60.
	want, err := dispatch.SplitFee(info.PriceWei, []uint64{92, 60})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Amounts) != 2 || s.Amounts[0].Cmp(want[0]) != 0 || s.Amounts[1].Cmp(want[1]) != 0 {
		t.Fatalf("amounts %v, want %v", s.Amounts, want)
	}
	if s.Total().Cmp(info.PriceWei) != 0 {
		t.Fatalf("total %v, price %v", s.Total(), info.PriceWei)
	}
	// Counted alone, wallet 0 has 4 results to wallet 1's 2: speed moves
	// wallet 1 above a third of the price.
	third := new(big.Int).Quo(info.PriceWei, big.NewInt(3))
	if s.Amounts[1].Cmp(third) <= 0 {
		t.Fatalf("the fast wallet gets %v, no more than a count-weighted third %v", s.Amounts[1], third)
	}
	// Another order is another settlement.
	swapped := rec
	swapped.Rounds = slices.Clone(rec.Rounds)
	swapped.Rounds[0] = records.RoundOrder{Macro: 0, Commits: []string{"p3", "p0", "p2", "p1"}, Disclosures: []string{"p3", "p0", "p2", "p1"}}
	other, err := processor.DeriveSettlement(cfg, info, swapped, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest(escrow.Domain{}) == s.Digest(escrow.Domain{}) {
		t.Fatal("the split ignores the rounds")
	}
	// Bad rounds make the verdict unsettleable, not a wrong split.
	swapped.Rounds = []records.RoundOrder{{Macro: 7, Commits: []string{"p0"}}}
	if _, err := processor.DeriveSettlement(cfg, info, swapped, v, nil); !errors.Is(err, processor.ErrNotSettleable) {
		t.Fatalf("rounds outside the verdict: %v", err)
	}
}

// TestDeriveSettlementSameOnEveryNode: two nodes that hold the same
// verdict record bytes derive byte-identical settlements, whatever order
// their config slices or maps hand things over in.
func TestDeriveSettlementSameOnEveryNode(t *testing.T) {
	info, rec, _ := recordstest.SpeedFixture(t)
	b := recordstest.EncodeRecord(t, rec)
	var digests []string
	for node := range 2 {
		vr, dv, err := records.DecodeVerdictRecord(slices.Clone(b))
		if err != nil {
			t.Fatal(err)
		}
		wallets := []string{recordstest.Wallet(2), recordstest.Wallet(3)}
		if node == 1 {
			slices.Reverse(wallets)
		}
		s, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, vr, dv, wallets)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := json.Marshal(records.NewSettlementRecord(s))
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, string(rb))
	}
	if digests[0] != digests[1] {
		t.Fatalf("two nodes derive different settlements:\n%s\n%s", digests[0], digests[1])
	}
}

// TestDeriveSettlementWithoutRoundsCountsResults: a version 1 record (no
// rounds) splits by the number of credited results, as before.
func TestDeriveSettlementWithoutRoundsCountsResults(t *testing.T) {
	info, rec, v := recordstest.PayoutFixture(t)
	s, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dispatch.SplitFee(info.PriceWei, []uint64{4, 2})
	if s.Amounts[0].Cmp(want[0]) != 0 || s.Amounts[1].Cmp(want[1]) != 0 {
		t.Fatalf("amounts %v, want %v", s.Amounts, want)
	}
}

// checkSpeedSplit checks a settled job's verdict record and payouts: the
// record has rounds for every MacroJob of the plan, and the payouts are
// the split by speed, computed here from the record alone: each credited
// result earns 10 + its processor's round scores ([10 5 2]) in its
// MacroJob.
func checkSpeedSplit(t *testing.T, m *localmesh.Mesh, info *jobs.JobInfo, res dapp.Result) {
	t.Helper()
	// Inline or in a body: the client's node reads either.
	chosen, err := finish.ReadVerdict(context.Background(), client(m).Store, client(m).IPFS, info.ID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, v := chosen.Record, chosen.Verdict
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Rounds) != len(plan.Macros) {
		t.Fatalf("rounds for %d of %d MacroJobs", len(rec.Rounds), len(plan.Macros))
	}
	points := func(list []string, p string) uint64 {
		i := slices.Index(list, p)
		if i < 0 || i >= 3 {
			return 0
		}
		return []uint64{10, 5, 2}[i]
	}
	culprit := map[string]bool{}
	for _, c := range append(slices.Clone(rec.Culprits), v.Culprits...) {
		culprit[c] = true
	}
	speed, count := map[common.Address]uint64{}, map[common.Address]uint64{}
	for _, x := range v.Results {
		if culprit[x.Processor] {
			continue
		}
		if rec.Rounds[x.Macro].Macro != x.Macro {
			t.Fatalf("rounds %d are of MacroJob %d", x.Macro, rec.Rounds[x.Macro].Macro)
		}
		if !slices.Contains(rec.Rounds[x.Macro].Disclosures, x.Processor) {
			t.Fatalf("credited %s is not among MacroJob %d's disclosers %v", x.Processor, x.Macro, rec.Rounds[x.Macro].Disclosures)
		}
		a := common.HexToAddress(x.Wallet)
		speed[a] += 10 + points(rec.Rounds[x.Macro].Commits, x.Processor) + points(rec.Rounds[x.Macro].Disclosures, x.Processor)
		count[a]++
	}
	payees := slices.SortedFunc(maps.Keys(speed), func(a, b common.Address) int { return a.Cmp(b) })
	split := func(w map[common.Address]uint64) []*big.Int {
		ws := make([]uint64, len(payees))
		for i, a := range payees {
			ws[i] = w[a]
		}
		out, err := dispatch.SplitFee(info.PriceWei, ws)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, byCount := split(speed), split(count)
	rel := res.Release
	if !slices.Equal(rel.Payees, payees) {
		t.Fatalf("payees %v, want %v", rel.Payees, payees)
	}
	differs := false
	for i := range payees {
		if rel.Amounts[i].Cmp(want[i]) != 0 {
			t.Fatalf("payee %s paid %v, the split by speed gives %v (by count %v)", payees[i], rel.Amounts[i], want[i], byCount[i])
		}
		differs = differs || want[i].Cmp(byCount[i]) != 0
	}
	t.Logf("rounds %+v; payouts %v; by count they would be %v (differs: %v)", rec.Rounds, rel.Amounts, byCount, differs)
}
