package records_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// sampleSettlement pays wallets 0 and 1 of a job and slashes wallet 2.
func sampleSettlement(t testing.TB) escrow.Settlement {
	t.Helper()
	payouts := map[common.Address]*big.Int{
		common.HexToAddress(recordstest.Wallet(0)): big.NewInt(600_000_004),
		common.HexToAddress(recordstest.Wallet(1)): big.NewInt(400_000_003),
	}
	s := escrow.NewSettlement(common.Hash{1}, common.Hash{2}, common.Hash{3}, common.Hash{4}, payouts, []common.Address{common.HexToAddress(recordstest.Wallet(2))})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSettlementRecordRoundTrip(t *testing.T) {
	s := sampleSettlement(t)
	b, err := json.Marshal(records.NewSettlementRecord(s))
	if err != nil {
		t.Fatal(err)
	}
	got, err := records.DecodeSettlementRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest(escrow.Domain{}) != s.Digest(escrow.Domain{}) {
		t.Fatal("round trip changed the settlement")
	}
	for name, bad := range map[string]string{
		"version":  strings.Replace(string(b), `"version":1`, `"version":2`, 1),
		"unsorted": strings.Replace(string(b), recordstest.Wallet(0)[2:], "ff"+recordstest.Wallet(0)[4:], 1),
		"amount":   strings.Replace(string(b), `"amounts":["`, `"amounts":["-`, 1),
		"unknown":  strings.Replace(string(b), `{`, `{"extra":1,`, 1),
		"trailing": string(b) + "{}",
		"large":    `{"version":1,"job":"` + strings.Repeat("0", records.MaxSettlementRecord) + `"}`,
	} {
		if _, err := records.DecodeSettlementRecord([]byte(bad)); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSettledRecordAuthor(t *testing.T) {
	r := records.SettledRecord{Version: records.SettledRecordVersion, Tx: "0x" + strings.Repeat("1f", 32), Block: 7, Submitter: "peerA"}
	b, _ := json.Marshal(r)
	if _, err := records.DecodeSettledRecord(b, "peerA"); err != nil {
		t.Fatal(err)
	}
	if _, err := records.DecodeSettledRecord(b, "peerB"); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("settled record by another author: %v", err)
	}
	r.Tx = "0x12"
	b, _ = json.Marshal(r)
	if _, err := records.DecodeSettledRecord(b, "peerA"); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("short tx hash: %v", err)
	}
}

func TestSignatureRecord(t *testing.T) {
	s := sampleSettlement(t)
	key := escrow.DevKey(3)
	d := escrow.Domain{ChainID: big.NewInt(escrow.DevChainID), Contract: common.Address{9}}
	sig, err := escrow.SignSettlement(key, d, s)
	if err != nil {
		t.Fatal(err)
	}
	signer := ethcrypto.PubkeyToAddress(key.PublicKey)
	b, err := escrow.SignedSettlement{Domain: d, Settlement: s, Signer: signer, Signature: sig}.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := records.DecodeSignatureRecord(b)
	if err != nil || got.Signer != signer {
		t.Fatalf("decode: %v", err)
	}
	forged := bytes.Clone(b)
	forged[len(forged)-85] ^= 1 // the signer's address
	if _, err := records.DecodeSignatureRecord(forged); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("forged signer: %v", err)
	}
}

func TestAuthorPolicySignatures(t *testing.T) {
	policy := records.AuthorPolicy()
	a, b := peer.ID("alice-peer"), peer.ID("bob-peer")
	id := jobs.ID{1}
	if err := policy(records.SignatureKey(id, a.String()), a); err != nil {
		t.Fatalf("own signature refused: %v", err)
	}
	if err := policy(records.SignatureKey(id, a.String()), b); err == nil {
		t.Fatal("a signature under another processor's key accepted")
	}
}

// TestAuthorPolicyTook: a took record is written by the processor its key
// names only, so a takeover of the MicroJobs cannot erase the first
// processor's evidence.
func TestAuthorPolicyTook(t *testing.T) {
	policy := records.AuthorPolicy()
	a, b := peer.ID("alice-peer"), peer.ID("bob-peer")
	id := jobs.ID{1}
	if err := policy(records.TookKey(id, 3, a.String()), a); err != nil {
		t.Fatalf("own took record refused: %v", err)
	}
	if err := policy(records.TookKey(id, 3, a.String()), b); err == nil {
		t.Fatal("a took record under another processor's key accepted")
	}
	if err := policy(records.RoomLockKey(id.String(), 3), b); err != nil {
		t.Fatalf("room lock refused: %v", err)
	}
}

func FuzzDecodeSettlementRecord(f *testing.F) {
	s := sampleSettlement(f)
	b, _ := json.Marshal(records.NewSettlementRecord(s))
	f.Add(b)
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := records.DecodeSettlementRecord(b)
		if err != nil {
			if !errors.Is(err, records.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded an invalid settlement: %v", err)
		}
		again, err := json.Marshal(records.NewSettlementRecord(s))
		if err != nil {
			t.Fatal(err)
		}
		s2, err := records.DecodeSettlementRecord(again)
		if err != nil || s2.Digest(escrow.Domain{}) != s.Digest(escrow.Domain{}) {
			t.Fatalf("re-encoding changed the settlement: %v", err)
		}
	})
}

func FuzzDecodeSettledRecord(f *testing.F) {
	f.Add([]byte(`{"version":1,"tx":"0x`+strings.Repeat("1f", 32)+`","block":7,"submitter":"p"}`), "p")
	f.Fuzz(func(t *testing.T, b []byte, author string) {
		r, err := records.DecodeSettledRecord(b, author)
		if err != nil {
			if !errors.Is(err, records.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if r.Submitter != author || r.Version != records.SettledRecordVersion {
			t.Fatalf("accepted %+v from %q", r, author)
		}
	})
}

func FuzzDecodeSignatureRecord(f *testing.F) {
	s := sampleSettlement(f)
	key := escrow.DevKey(3)
	d := escrow.Domain{ChainID: big.NewInt(escrow.DevChainID), Contract: common.Address{9}}
	sig, _ := escrow.SignSettlement(key, d, s)
	b, _ := escrow.SignedSettlement{Domain: d, Settlement: s, Signer: ethcrypto.PubkeyToAddress(key.PublicKey), Signature: sig}.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := records.DecodeSignatureRecord(b)
		if err != nil {
			if !errors.Is(err, records.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if err := escrow.VerifySettlement(m.Domain, m.Settlement, m.Signer, m.Signature); err != nil {
			t.Fatalf("accepted a bad signature: %v", err)
		}
	})
}
