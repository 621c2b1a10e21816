package settlement_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
	"github.com/jobmesh/jobmesh/settlement"
)

// TestSummaryCheckedAgainstTheChain: the summary of the verdict a
// settlement was derived from passes against its release; one whose
// writer added a locker (to have an honest processor counted as timing
// out), named a culprit, reordered a round or named another output or
// transaction does not.
// summaryFixture is a settled job of recordstest.SpeedFixture with real
// peer IDs: its verdict record and verdict, the release of the
// settlement derived from them, and the peer IDs of p0..p3.
func summaryFixture(t *testing.T) (records.VerdictRecord, microjob.Verdict, *escrow.Release, map[string]string) {
	t.Helper()
	info, rec, v := recordstest.SpeedFixture(t)
	rec, ids := recordstest.WithPeerIDs(t, rec)
	s, err := settlement.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{recordstest.Wallet(2)})
	if err != nil {
		t.Fatal(err)
	}
	rel := &escrow.Release{Key: s.Key, ResultRoot: s.ResultRoot, VerifierHash: s.VerifierHash,
		Payees: s.Payees, Amounts: s.Amounts, Block: 12, TxHash: common.HexToHash("0xabc")}
	return rec, v, rel, ids
}

func TestSummaryCheckedAgainstTheChain(t *testing.T) {
	rec, v, rel, ids := summaryFixture(t)
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

// TestReadSummaryTakesOnlyACheckedOne: on a real replicated store, a
// peer that writes a forged summary under its own key (a framed locker)
// is skipped, cannot write under the settler's key, and the reader takes
// the settler's summary.
func TestReadSummaryTakesOnlyACheckedOne(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	settler, attacker := c.Replicas[0], c.Replicas[1]
	rec, v, rel, _ := summaryFixture(t)
	id := jobs.ID{9}
	ctx := context.Background()
	put := func(r *crdttest.Replica, author string, s records.SummaryRecord) error {
		b, err := records.EncodeSummaryRecord(s)
		if err != nil {
			t.Fatal(err)
		}
		return r.Store.Put(ctx, records.SummaryKey(id, author), records.SummaryType, b)
	}
	forged, err := records.NewSummary(records.SummarySettled, framed(rec, attacker.ID().String()), v, rel.TxHash, rel.Block)
	if err != nil {
		t.Fatal(err)
	}
	if err := put(attacker, attacker.ID().String(), forged); err != nil {
		t.Fatal(err)
	}
	if err := put(attacker, settler.ID().String(), forged); err == nil {
		t.Fatal("a summary under the settler's key was written by another peer")
	}
	c.WaitGet(0, records.SummaryKey(id, attacker.ID().String()), nil)
	if _, ok, err := settlement.ReadSummary(ctx, settler.Store, id, rel); err != nil || ok {
		t.Fatalf("the forged summary alone was taken: %v, %v", ok, err)
	}
	honest, err := records.NewSummary(records.SummarySettled, rec, v, rel.TxHash, rel.Block)
	if err != nil {
		t.Fatal(err)
	}
	if err := put(settler, settler.ID().String(), honest); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(1, records.SummaryKey(id, settler.ID().String()), nil)
	got, ok, err := settlement.ReadSummary(ctx, attacker.Store, id, rel)
	if err != nil || !ok || got.Digest() != rel.VerifierHash {
		t.Fatalf("read %+v, %v, %v", got, ok, err)
	}
}

// framed is rec with p named a locker of its last round.
func framed(rec records.VerdictRecord, p string) records.VerdictRecord {
	r := rec
	r.Rounds = slices.Clone(rec.Rounds)
	last := &r.Rounds[len(r.Rounds)-1]
	last.Lockers = append(slices.Clone(last.Lockers), p)
	return r
}
