package settlement_test

import (
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
	"github.com/jobmesh/jobmesh/settlement"
)

// TestSummaryCheckedAgainstTheChain: the summary of the verdict a
// settlement was derived from passes against its release; one whose
// writer added a locker (to have an honest processor counted as timing
// out), named a culprit, reordered a round or named another output or
// transaction does not.
func TestSummaryCheckedAgainstTheChain(t *testing.T) {
	info, rec, v := recordstest.SpeedFixture(t)
	ids := map[string]string{}
	for _, p := range []string{"p0", "p1", "p2", "p3"} {
		ids[p] = test.RandPeerIDFatal(t).String()
	}
	for i := range rec.Rounds {
		for _, list := range [][]string{rec.Rounds[i].Commits, rec.Rounds[i].Disclosures} {
			for j, p := range list {
				list[j] = ids[p]
			}
		}
	}
	rec.Culprits = []string{ids["p2"]}
	s, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{recordstest.Wallet(2)})
	if err != nil {
		t.Fatal(err)
	}
	rel := &escrow.Release{Key: s.Key, ResultRoot: s.ResultRoot, VerifierHash: s.VerifierHash,
		Payees: s.Payees, Amounts: s.Amounts, Block: 12, TxHash: common.HexToHash("0xabc")}
	honest, err := records.NewSummary(records.SummarySettled, rec, v, rel.TxHash, rel.Block)
	if err != nil {
		t.Fatal(err)
	}
	if err := settlement.CheckSummary(honest, rel); err != nil {
		t.Fatalf("the honest summary: %v", err)
	}

	forge := func(edit func(r *records.SummaryRecord)) records.SummaryRecord {
		c, err := records.NewSummary(records.SummarySettled, rec, v, rel.TxHash, rel.Block)
		if err != nil {
			t.Fatal(err)
		}
		edit(&c)
		return c
	}
	stranger := test.RandPeerIDFatal(t).String()
	forged := map[string]records.SummaryRecord{
		"a framed locker": forge(func(r *records.SummaryRecord) {
			r.Members = append(r.Members, stranger)
			r.Rounds[1].Lockers = []int{len(r.Members) - 1}
		}),
		"a framed culprit":    forge(func(r *records.SummaryRecord) { r.Culprits = append(r.Culprits, ids["p1"]) }),
		"a culprit let go":    forge(func(r *records.SummaryRecord) { r.Culprits = []string{} }),
		"another round order": forge(func(r *records.SummaryRecord) { c := r.Rounds[0].Commits; c[0], c[1] = c[1], c[0] }),
		"another output":      forge(func(r *records.SummaryRecord) { r.Output = "bafkqaaa" }),
		"another transaction": forge(func(r *records.SummaryRecord) { r.Tx = common.HexToHash("0xdef").Hex() }),
		"another block":       forge(func(r *records.SummaryRecord) { r.Block = 13 }),
		"verified, not settled": forge(func(r *records.SummaryRecord) {
			r.State, r.Tx, r.Block = records.SummaryVerified, "", 0
		}),
	}
	for name, f := range forged {
		if err := settlement.CheckSummary(f, rel); !errors.Is(err, settlement.ErrSummaryMismatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := settlement.CheckSummary(honest, nil); !errors.Is(err, settlement.ErrSummaryMismatch) {
		t.Errorf("a summary of a job not released: %v", err)
	}
}
