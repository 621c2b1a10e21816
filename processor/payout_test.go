package processor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

func testCID(t testing.TB) cid.Cid {
	t.Helper()
	h, err := mh.Sum([]byte("output"), mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.DagProtobuf, h)
}

func wallet(i int) string { return fmt.Sprintf("0x%040x", 0xa0+i) }

// payoutFixture is a verified verdict: processors p0..p3 with wallets
// w0..w3 (p3 shares w0), p2 a culprit.
func payoutFixture(t testing.TB) (*jobs.JobInfo, processor.VerdictRecord, microjob.Verdict) {
	t.Helper()
	info := &jobs.JobInfo{PriceWei: big.NewInt(1_000_000_007), Seed: sha256.Sum256([]byte("seed")), Deadline: 1 << 32}
	v := microjob.Verdict{
		Version: microjob.VerdictVersion, Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{0: {strings.Repeat("ab", 32)}, 1: {strings.Repeat("cd", 32), strings.Repeat("ef", 32)}},
	}
	add := func(p string, w int, n int) {
		for range n {
			v.Results = append(v.Results, microjob.Result{Processor: p, Wallet: wallet(w)})
		}
	}
	add("p0", 0, 3)
	add("p1", 1, 2)
	add("p2", 2, 4) // the culprit's results do not count
	add("p3", 0, 1)
	rec := processor.VerdictRecord{Verdict: json.RawMessage(v.Encode()), Culprits: []string{"p2"}, Output: testCID(t).String()}
	return info, rec, v
}

func TestDeriveSettlement(t *testing.T) {
	info, rec, v := payoutFixture(t)
	s, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{wallet(2), wallet(2), "junk"})
	if err != nil {
		t.Fatal(err)
	}
	w0, w1, w2 := common.HexToAddress(wallet(0)), common.HexToAddress(wallet(1)), common.HexToAddress(wallet(2))
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
	if s.Key != escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())) || s.Seed != common.Hash(info.Seed) {
		t.Fatal("job key or seed not the job's")
	}
	if s.ResultRoot != ethcrypto.Keccak256Hash(testCID(t).Bytes()) {
		t.Fatal("result root is not keccak256 of the output CID")
	}
	if s.VerifierHash != processor.VerifierDigest(v) || s.VerifierHash == (common.Hash{}) {
		t.Fatal("verifier hash")
	}
	again, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{wallet(2)})
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest(escrow.Domain{}) != s.Digest(escrow.Domain{}) {
		t.Fatal("derivation is not deterministic")
	}
	// A culprit wallet that is also credited stays a payee, not a culprit.
	both, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{wallet(0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(both.Culprits) != 0 {
		t.Fatalf("a paid wallet is slashed: %v", both.Culprits)
	}
	v2 := v
	v2.VerifierHashes = map[uint64][]string{0: {strings.Repeat("ab", 32)}}
	if processor.VerifierDigest(v2) == processor.VerifierDigest(v) {
		t.Fatal("verifier digest ignores a MacroJob")
	}
}

func TestDeriveSettlementRefusesUnpayable(t *testing.T) {
	info, rec, v := payoutFixture(t)
	unverified := v
	unverified.Verified = false
	if _, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, unverified, nil); !errors.Is(err, processor.ErrNotSettleable) {
		t.Fatalf("unverified verdict: %v", err)
	}
	rec.Culprits = []string{"p0", "p1", "p2", "p3"}
	if _, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil); !errors.Is(err, processor.ErrNotSettleable) {
		t.Fatalf("no credited result: %v", err)
	}
	_, rec, _ = payoutFixture(t)
	rec.Output = "not a cid"
	if _, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil); !errors.Is(err, processor.ErrNotSettleable) {
		t.Fatalf("bad output CID: %v", err)
	}
}

func TestSettlementRecordRoundTrip(t *testing.T) {
	info, rec, v := payoutFixture(t)
	s, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{wallet(2)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(processor.NewSettlementRecord(s))
	if err != nil {
		t.Fatal(err)
	}
	got, err := processor.DecodeSettlementRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest(escrow.Domain{}) != s.Digest(escrow.Domain{}) {
		t.Fatal("round trip changed the settlement")
	}
	for name, bad := range map[string]string{
		"version":  strings.Replace(string(b), `"version":1`, `"version":2`, 1),
		"unsorted": strings.Replace(string(b), wallet(0)[2:], "ff"+wallet(0)[4:], 1),
		"amount":   strings.Replace(string(b), `"amounts":["`, `"amounts":["-`, 1),
		"unknown":  strings.Replace(string(b), `{`, `{"extra":1,`, 1),
		"trailing": string(b) + "{}",
		"large":    `{"version":1,"job":"` + strings.Repeat("0", processor.MaxSettlementRecord) + `"}`,
	} {
		if _, err := processor.DecodeSettlementRecord([]byte(bad)); !errors.Is(err, processor.ErrBadRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSettledRecordAuthor(t *testing.T) {
	r := processor.SettledRecord{Version: processor.SettledRecordVersion, Tx: "0x" + strings.Repeat("1f", 32), Block: 7, Submitter: "peerA"}
	b, _ := json.Marshal(r)
	if _, err := processor.DecodeSettledRecord(b, "peerA"); err != nil {
		t.Fatal(err)
	}
	if _, err := processor.DecodeSettledRecord(b, "peerB"); !errors.Is(err, processor.ErrBadRecord) {
		t.Fatalf("settled record by another author: %v", err)
	}
	r.Tx = "0x12"
	b, _ = json.Marshal(r)
	if _, err := processor.DecodeSettledRecord(b, "peerA"); !errors.Is(err, processor.ErrBadRecord) {
		t.Fatalf("short tx hash: %v", err)
	}
}

func TestSignatureRecord(t *testing.T) {
	info, rec, v := payoutFixture(t)
	s, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil)
	if err != nil {
		t.Fatal(err)
	}
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
	got, err := processor.DecodeSignatureRecord(b)
	if err != nil || got.Signer != signer {
		t.Fatalf("decode: %v", err)
	}
	forged := bytes.Clone(b)
	forged[len(forged)-85] ^= 1 // the signer's address
	if _, err := processor.DecodeSignatureRecord(forged); !errors.Is(err, processor.ErrBadRecord) {
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

func FuzzDecodeSettlementRecord(f *testing.F) {
	info, rec, v := payoutFixture(f)
	s, err := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, []string{wallet(2)})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := json.Marshal(processor.NewSettlementRecord(s))
	f.Add(b)
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := processor.DecodeSettlementRecord(b)
		if err != nil {
			if !errors.Is(err, processor.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("decoded an invalid settlement: %v", err)
		}
		again, err := json.Marshal(processor.NewSettlementRecord(s))
		if err != nil {
			t.Fatal(err)
		}
		s2, err := processor.DecodeSettlementRecord(again)
		if err != nil || s2.Digest(escrow.Domain{}) != s.Digest(escrow.Domain{}) {
			t.Fatalf("re-encoding changed the settlement: %v", err)
		}
	})
}

func FuzzDecodeSettledRecord(f *testing.F) {
	f.Add([]byte(`{"version":1,"tx":"0x`+strings.Repeat("1f", 32)+`","block":7,"submitter":"p"}`), "p")
	f.Fuzz(func(t *testing.T, b []byte, author string) {
		r, err := processor.DecodeSettledRecord(b, author)
		if err != nil {
			if !errors.Is(err, processor.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if r.Submitter != author || r.Version != processor.SettledRecordVersion {
			t.Fatalf("accepted %+v from %q", r, author)
		}
	})
}

func FuzzDecodeSignatureRecord(f *testing.F) {
	info, rec, v := payoutFixture(f)
	s, _ := processor.DeriveSettlement(dispatch.DefaultConfig(), info, rec, v, nil)
	key := escrow.DevKey(3)
	d := escrow.Domain{ChainID: big.NewInt(escrow.DevChainID), Contract: common.Address{9}}
	sig, _ := escrow.SignSettlement(key, d, s)
	b, _ := escrow.SignedSettlement{Domain: d, Settlement: s, Signer: ethcrypto.PubkeyToAddress(key.PublicKey), Signature: sig}.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := processor.DecodeSignatureRecord(b)
		if err != nil {
			if !errors.Is(err, processor.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if err := escrow.VerifySettlement(m.Domain, m.Settlement, m.Signer, m.Signature); err != nil {
			t.Fatalf("accepted a bad signature: %v", err)
		}
	})
}
