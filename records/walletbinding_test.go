package records_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/records"
)

// bindingRecord is wb as its author stores it.
func bindingRecord(t testing.TB, author peer.ID, wb records.WalletBinding) crdt.Record {
	t.Helper()
	b, err := json.Marshal(wb)
	if err != nil {
		t.Fatal(err)
	}
	return crdt.Record{Key: records.WalletBindingKey(author.String()), Type: records.WalletBindingType, Author: author, Seq: 1, Payload: b}
}

func TestWalletBindingRefusesForgeries(t *testing.T) {
	self, other := newPeer(t), newPeer(t)
	key, _ := ethcrypto.GenerateKey()    // this processor's wallet
	victim, _ := ethcrypto.GenerateKey() // an honest processor's wallet
	victimAddr := strings.ToLower(ethcrypto.PubkeyToAddress(victim.PublicKey).Hex())
	good, err := records.NewWalletBinding(self.String(), key)
	if err != nil {
		t.Fatal(err)
	}
	got, err := records.OpenWalletBinding(bindingRecord(t, self, good))
	if err != nil {
		t.Fatalf("valid binding refused: %v", err)
	}
	if want := strings.ToLower(ethcrypto.PubkeyToAddress(key.PublicKey).Hex()); got.Wallet != want {
		t.Fatalf("bound wallet %s, want %s", got.Wallet, want)
	}
	// personal_sign with the wallet key over the documented message: what
	// a hardware wallet or MetaMask would produce.
	sig, _ := hex.DecodeString(good.Signature[2:])
	if sig[64] != 27 && sig[64] != 28 {
		t.Fatalf("v = %d, want 27 or 28", sig[64])
	}

	// Claims the victim's wallet, signed by its own key.
	claim := good
	claim.Wallet = victimAddr
	// The victim's genuine binding of another peer, re-labelled as self's:
	// the signature names the other peer.
	relabelled, _ := records.NewWalletBinding(other.String(), victim)
	relabelled.Peer = self.String()
	// The victim's genuine binding of another peer, stored as is by self.
	copied, _ := records.NewWalletBinding(other.String(), victim)
	// The same signature with s and v flipped (s in the upper half).
	highS := good
	{
		b := append([]byte(nil), sig...)
		n := ethcrypto.S256().Params().N
		s := new(big.Int).Sub(n, new(big.Int).SetBytes(b[32:64]))
		s.FillBytes(b[32:64])
		b[64] ^= 1 // 27 <-> 28
		highS.Signature = "0x" + hex.EncodeToString(b)
	}
	rawV := good
	{
		b := append([]byte(nil), sig...)
		b[64] -= 27
		rawV.Signature = "0x" + hex.EncodeToString(b)
	}
	checksummed := good
	checksummed.Wallet = ethcrypto.PubkeyToAddress(key.PublicKey).Hex()
	payload := bindingRecord(t, self, good).Payload

	for name, tc := range map[string]struct {
		rec  crdt.Record
		want error
	}{
		"signature by another key": {bindingRecord(t, self, claim), records.ErrBindingSignature},
		"wrong peer in message":    {bindingRecord(t, self, relabelled), records.ErrBindingSignature},
		"another peer's binding":   {bindingRecord(t, self, copied), records.ErrBindingPeer},
		"high s":                   {bindingRecord(t, self, highS), records.ErrBadBinding},
		"v 0 or 1":                 {bindingRecord(t, self, rawV), records.ErrBadBinding},
		"checksummed wallet":       {bindingRecord(t, self, checksummed), records.ErrBadBinding},
		"truncated": {func() crdt.Record {
			r := bindingRecord(t, self, good)
			r.Payload = r.Payload[:len(r.Payload)-2]
			return r
		}(), records.ErrBadBinding},
		"oversized": {func() crdt.Record {
			r := bindingRecord(t, self, good)
			r.Payload = []byte(strings.Replace(string(payload), `"version"`, `"pad":"`+strings.Repeat("a", records.MaxWalletBinding)+`","version"`, 1))
			return r
		}(), records.ErrBadBinding},
		"under another peer's key": {func() crdt.Record {
			r := bindingRecord(t, self, good)
			r.Key = records.WalletBindingKey(other.String())
			return r
		}(), records.ErrBadBinding},
		"wrong type": {func() crdt.Record {
			r := bindingRecord(t, self, good)
			r.Type = "node"
			return r
		}(), records.ErrBadBinding},
	} {
		_, err := records.OpenWalletBinding(tc.rec)
		if !errors.Is(err, tc.want) || !errors.Is(err, records.ErrBadBinding) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

func FuzzDecodeWalletBinding(f *testing.F) {
	key, _ := ethcrypto.GenerateKey()
	id := newPeer(f)
	wb, err := records.NewWalletBinding(id.String(), key)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := json.Marshal(wb)
	f.Add(b)
	f.Add([]byte(`{"version":1,"peer":"x","wallet":"0x","signature":"0x"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		wb, err := records.DecodeWalletBinding(in)
		if err != nil {
			if !errors.Is(err, records.ErrBadBinding) {
				t.Fatalf("error %v does not wrap ErrBadBinding", err)
			}
			return
		}
		// Verifying whatever decodes never panics, and fails only with
		// ErrBadBinding.
		if err := wb.Verify(wb.Peer); err != nil && !errors.Is(err, records.ErrBadBinding) {
			t.Fatalf("verify: %v", err)
		}
		again, _ := json.Marshal(wb)
		wb2, err := records.DecodeWalletBinding(again)
		if err != nil || wb2 != wb {
			t.Fatalf("round trip: %+v, %v", wb2, err)
		}
	})
}
