package settlement_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
	"github.com/jobmesh/jobmesh/settlement"
)

func TestDeriveSettlement(t *testing.T) {
	info, rec, v := recordstest.PayoutFixture(t)
	s, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{recordstest.Wallet(2), recordstest.Wallet(2), "junk"})
	if err != nil {
		t.Fatal(err)
	}
	w0, w1, w2 := common.HexToAddress(recordstest.Wallet(0)), common.HexToAddress(recordstest.Wallet(1)), common.HexToAddress(recordstest.Wallet(2))
	if len(s.Payees) != 2 || s.Payees[0] != w0 || s.Payees[1] != w1 {
		t.Fatalf("payees %v", s.Payees)
	}
	if s.Total().Cmp(info.PriceWei) != 0 {
		t.Fatalf("total %v, price %v", s.Total(), info.PriceWei)
	}
	// 4 credits to w0, 2 to w1: w0 gets twice w1, give or take a wei.
	if d := new(big.Int).Sub(s.Amounts[0], new(big.Int).Mul(s.Amounts[1], big.NewInt(2))); d.CmpAbs(big.NewInt(2)) > 0 {
		t.Fatalf("amounts %v not 2:1", s.Amounts)
	}
	if len(s.Culprits) != 1 || s.Culprits[0] != w2 {
		t.Fatalf("culprits %v", s.Culprits)
	}
	if s.Key != escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())) || s.Seed != (common.Hash{}) {
		t.Fatal("job key or seed not the job's")
	}
	if s.ResultRoot != ethcrypto.Keccak256Hash(recordstest.OutputCID(t).Bytes()) {
		t.Fatal("result root is not keccak256 of the output CID")
	}
	if s.VerifierHash != records.OutcomeDigest(v, rec) || s.VerifierHash == (common.Hash{}) {
		t.Fatal("verifier hash")
	}
	again, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{recordstest.Wallet(2)})
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest(escrow.Domain{}) != s.Digest(escrow.Domain{}) {
		t.Fatal("derivation is not deterministic")
	}
	// A culprit wallet that is also credited stays a payee, not a culprit.
	both, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{recordstest.Wallet(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(both.Culprits) != 0 {
		t.Fatalf("a paid wallet is slashed: %v", both.Culprits)
	}
	v2 := v
	v2.VerifierHashes = map[uint64][]string{0: {strings.Repeat("ab", 32)}}
	if records.VerifierDigest(v2) == records.VerifierDigest(v) {
		t.Fatal("verifier digest ignores a MacroJob")
	}
}

func TestDeriveSettlementRefusesUnpayable(t *testing.T) {
	info, rec, v := recordstest.PayoutFixture(t)
	unverified := v
	unverified.Verified = false
	if _, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, unverified, nil); !errors.Is(err, settlement.ErrNotSettleable) {
		t.Fatalf("unverified verdict: %v", err)
	}
	rec.Culprits = []string{"p0", "p1", "p2", "p3"}
	if _, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil); !errors.Is(err, settlement.ErrNotSettleable) {
		t.Fatalf("no credited result: %v", err)
	}
	_, rec, _ = recordstest.PayoutFixture(t)
	rec.Output = "not a cid"
	if _, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil); !errors.Is(err, settlement.ErrNotSettleable) {
		t.Fatalf("bad output CID: %v", err)
	}
}
