package escrow

import (
	"bytes"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

func testSettlement(n int) Settlement {
	pay := map[common.Address]*big.Int{}
	for i := range n {
		pay[crypto.PubkeyToAddress(DevKey(i).PublicKey)] = big.NewInt(int64(1000 + i))
	}
	return NewSettlement(common.Hash{1}, common.Hash{2}, common.Hash{3}, common.Hash{4}, pay,
		[]common.Address{crypto.PubkeyToAddress(DevKey(n).PublicKey)})
}

var testDomain = Domain{ChainID: big.NewInt(DevChainID), Contract: common.HexToAddress("0x00000000000000000000000000000000000e5c40")}

func TestNewSettlementSortsAndValidates(t *testing.T) {
	s := testSettlement(5)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(s.Payees); i++ {
		if bytes.Compare(s.Payees[i-1][:], s.Payees[i][:]) >= 0 {
			t.Fatalf("payees not ascending at %d", i)
		}
	}
	if s.Total().Int64() != 1000+1001+1002+1003+1004 {
		t.Fatalf("total %v", s.Total())
	}
	bad := []func(*Settlement){
		func(s *Settlement) { s.Payees = nil; s.Amounts = nil },
		func(s *Settlement) { s.Amounts = s.Amounts[1:] },
		func(s *Settlement) { s.Payees[0], s.Payees[1] = s.Payees[1], s.Payees[0] },
		func(s *Settlement) { s.Payees[1] = s.Payees[0] },
		func(s *Settlement) { s.Amounts[0] = big.NewInt(-1) },
		func(s *Settlement) { s.Amounts[0] = new(big.Int).Lsh(big.NewInt(1), 96) },
		func(s *Settlement) { s.Culprits = append(s.Culprits, s.Payees[2]) },
		func(s *Settlement) { s.Culprits = []common.Address{s.Culprits[0], s.Culprits[0]} },
	}
	for i, mutate := range bad {
		c := testSettlement(5)
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrBadSettlement) {
			t.Errorf("case %d: %v", i, err)
		}
	}
}

func TestSignAndVerifySettlement(t *testing.T) {
	s := testSettlement(3)
	key := DevKey(0)
	signer := crypto.PubkeyToAddress(key.PublicKey)
	sig, err := SignSettlement(key, testDomain, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig) != 65 || (sig[64] != 27 && sig[64] != 28) {
		t.Fatalf("signature format %x", sig)
	}
	if err := VerifySettlement(testDomain, s, signer, sig); err != nil {
		t.Fatal(err)
	}
	// Any change to what was signed, or to the domain, breaks it.
	changed := testSettlement(3)
	changed.Amounts[0] = big.NewInt(1)
	otherChain := Domain{ChainID: big.NewInt(1), Contract: testDomain.Contract}
	otherContract := Domain{ChainID: testDomain.ChainID, Contract: common.Address{9}}
	for name, check := range map[string]error{
		"amount":   VerifySettlement(testDomain, changed, signer, sig),
		"chain":    VerifySettlement(otherChain, s, signer, sig),
		"contract": VerifySettlement(otherContract, s, signer, sig),
		"signer":   VerifySettlement(testDomain, s, common.Address{7}, sig),
		"short":    VerifySettlement(testDomain, s, signer, sig[:64]),
	} {
		if !errors.Is(check, ErrBadSignature) {
			t.Errorf("%s: %v", name, check)
		}
	}
	highS := bytes.Clone(sig)
	sv := new(big.Int).SetBytes(highS[32:64])
	new(big.Int).Sub(crypto.S256().Params().N, sv).FillBytes(highS[32:64])
	highS[64] ^= 1
	if _, err := RecoverSigner(testDomain, s, highS); !errors.Is(err, ErrBadSignature) {
		t.Errorf("high s accepted: %v", err)
	}
	badV := bytes.Clone(sig)
	badV[64] = 1
	if _, err := RecoverSigner(testDomain, s, badV); !errors.Is(err, ErrBadSignature) {
		t.Errorf("v=1 accepted: %v", err)
	}
}

// TestSettlementDigestVector pins the EIP-712 digest and the job key so
// that another implementation can check itself against them.
func TestSettlementDigestVector(t *testing.T) {
	s := Settlement{
		Key:          common.HexToHash("0x01"),
		Seed:         common.HexToHash("0x02"),
		ResultRoot:   common.HexToHash("0x03"),
		VerifierHash: common.HexToHash("0x04"),
		Payees:       []common.Address{common.HexToAddress("0x0a"), common.HexToAddress("0x0b")},
		Amounts:      []*big.Int{big.NewInt(5), big.NewInt(6)},
		Culprits:     []common.Address{common.HexToAddress("0x0c")},
	}
	d := Domain{ChainID: big.NewInt(1337), Contract: common.HexToAddress("0x00000000000000000000000000000000000e5c40")}
	if got, want := SeedCommitment(s.Seed), crypto.Keccak256Hash(common.HexToHash("0x02").Bytes()); got != want {
		t.Fatalf("seed commitment %x", got)
	}
	const wantSep = "0x61c3e7a2e70f139f79cada6d5f369fcd497a7593bd6d08d61a0cb6623b1aabf3"
	const wantDigest = "0x7ff28264d6eb39a0827d224adb3dda839fc632f1f69380b92d4f6a2dcfee88ee"
	const wantKey = "0xeabdd77983adb372f17466252b4975c0b7cbc1d307018e6525af43ef1df24dd6"
	if got := JobKey(common.HexToAddress("0x0a"), common.HexToHash("0x01")).Hex(); got != wantKey {
		t.Errorf("job key %s, want %s", got, wantKey)
	}
	if got := d.Separator().Hex(); got != wantSep {
		t.Errorf("separator %s, want %s", got, wantSep)
	}
	if got := s.Digest(d).Hex(); got != wantDigest {
		t.Errorf("digest %s, want %s", got, wantDigest)
	}
}

func TestSignedSettlementRoundTrip(t *testing.T) {
	s := testSettlement(4)
	key := DevKey(2)
	sig, err := SignSettlement(key, testDomain, s)
	if err != nil {
		t.Fatal(err)
	}
	m := SignedSettlement{Domain: testDomain, Settlement: s, Signer: crypto.PubkeyToAddress(key.PublicKey), Signature: sig}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSignedSettlement(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := got.MarshalBinary()
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs: %v", err)
	}
	if got.Settlement.Digest(got.Domain) != s.Digest(testDomain) {
		t.Fatal("decoded settlement has another digest")
	}

	// Every decoder refusal is an error, never a panic or a half value.
	forged := bytes.Clone(b)
	forged[len(forged)-66] ^= 1 // last byte of the signer
	tampered := bytes.Clone(b)
	tampered[1+32+20+1] ^= 1 // job key
	for name, tc := range map[string]struct {
		in   []byte
		want error
	}{
		"empty":     {nil, ErrBadEncoding},
		"version 1": {append([]byte{1}, b[1:]...), ErrBadEncoding},
		"version 3": {append([]byte{3}, b[1:]...), ErrBadEncoding},
		"truncated": {b[:len(b)-1], ErrBadEncoding},
		"trailing":  {append(bytes.Clone(b), 0), ErrBadEncoding},
		"too large": {make([]byte, MaxSignedSettlementSize+1), ErrTooLarge},
		"forged":    {forged, ErrBadSignature},
		"tampered":  {tampered, ErrBadSignature},
	} {
		if _, err := DecodeSignedSettlement(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

func TestDevKeysAreDeterministic(t *testing.T) {
	a, b := DevKeys(3), DevKeys(3)
	for i := range a {
		if !a[i].Equal(b[i]) {
			t.Fatalf("dev key %d differs between calls", i)
		}
	}
	if a[0].Equal(a[1]) {
		t.Fatal("dev keys 0 and 1 are equal")
	}
	// Pinned so that documentation and other tools can rely on it.
	const want0 = "0x68aE78Abd0c35807C619dFDBb78d528aa9c09EdB"
	if got := crypto.PubkeyToAddress(a[0].PublicKey).Hex(); got != want0 {
		t.Errorf("dev account 0 is %s, want %s", got, want0)
	}
}

func FuzzDecodeSignedSettlement(f *testing.F) {
	for _, n := range []int{1, 3} {
		s := testSettlement(n)
		key := DevKey(0)
		sig, _ := SignSettlement(key, testDomain, s)
		b, err := SignedSettlement{Domain: testDomain, Settlement: s, Signer: crypto.PubkeyToAddress(key.PublicKey), Signature: sig}.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeSignedSettlement(b)
		if err != nil {
			return
		}
		// Anything accepted is valid, correctly signed and canonical.
		if err := VerifySettlement(m.Domain, m.Settlement, m.Signer, m.Signature); err != nil {
			t.Fatalf("accepted a message that does not verify: %v", err)
		}
		out, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted a message that cannot be encoded: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("encoding not canonical")
		}
	})
}
