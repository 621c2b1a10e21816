package settlement_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
	"github.com/jobmesh/jobmesh/settlement"
)

// TestDeriveSettlementBySpeed: with rounds, each credited result earns its
// processor's task score in its MacroJob, at least dispatch.FeeFloor. p1 (wallet
// 1) was first in both rounds of MacroJob 0; wallet 0 holds p0's results
// (second in MacroJob 0, alone in MacroJob 1) and p3's (third committer,
// last discloser); the culprit p2 earns nothing.
func TestDeriveSettlementBySpeed(t *testing.T) {
	info, rec, v := recordstest.SpeedFixture(t)
	cfg := dispatch.DefaultConfig()
	s, err := settlement.DeriveSettlement(cfg, info, rec, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Wallet 0: p0 once in MacroJob 0 (5 + 5) and twice in MacroJob 1
	// (2 × (10 + 10)), p3 once (2 + 0, lifted to the floor 4): 54.
	// Wallet 1: p1 twice in MacroJob 0, 2 × (10 + 10) = 40.
	want, err := dispatch.SplitFee(info.PriceWei, []uint64{54, 40})
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
	other, err := settlement.DeriveSettlement(cfg, info, swapped, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if other.Digest(escrow.Domain{}) == s.Digest(escrow.Domain{}) {
		t.Fatal("the split ignores the rounds")
	}
	// Bad rounds make the verdict unsettleable, not a wrong split.
	swapped.Rounds = []records.RoundOrder{{Macro: 7, Commits: []string{"p0"}}}
	if _, err := settlement.DeriveSettlement(cfg, info, swapped, v, nil); !errors.Is(err, settlement.ErrNotSettleable) {
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
		s, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, vr, dv, wallets)
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
	s, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dispatch.SplitFee(info.PriceWei, []uint64{4, 2})
	if s.Amounts[0].Cmp(want[0]) != 0 || s.Amounts[1].Cmp(want[1]) != 0 {
		t.Fatalf("amounts %v, want %v", s.Amounts, want)
	}
}
