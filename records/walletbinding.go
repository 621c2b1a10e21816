package records

import (
	"crypto/ecdsa"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/microjob"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// A wallet binding ties a processor's peer ID to the wallet it is paid
// and slashed through: the wallet key signs (EIP-191 personal_sign) a
// message naming the peer, and the peer stores the record under its own
// /nodes key, which the store's author policy lets no other peer write.
// A record that claims a wallet therefore proves it twice: the peer wrote
// it, and the wallet's key agreed to it. See docs/PROTOCOL.md.
const (
	// WalletBindingVersion is the version of the WalletBinding record.
	WalletBindingVersion = 1
	// MaxWalletBinding bounds an encoded WalletBinding (a real one is
	// about 270 bytes).
	MaxWalletBinding = 1 << 10
	// walletBindingDomain opens the signed message, so that the signature
	// means nothing anywhere else.
	walletBindingDomain = "jobmesh wallet binding v1\npeer: "
)

var (
	// ErrBadBinding is wrapped by every refusal of a wallet binding.
	ErrBadBinding = errors.New("records: bad wallet binding")
	// ErrBindingPeer: the binding names a peer other than the one whose
	// key it is stored under (its author).
	ErrBindingPeer = errors.New("binding names another peer")
	// ErrBindingSignature: the signature does not recover to the wallet
	// the binding claims (another key signed, or it signed another
	// message, such as one naming another peer).
	ErrBindingSignature = errors.New("signature is not the wallet's")
)

// WalletBindingMessage is the text the wallet key signs for peerID.
func WalletBindingMessage(peerID string) []byte { return []byte(walletBindingDomain + peerID) }

// WalletBinding is the record: peer Peer is paid through Wallet.
type WalletBinding struct {
	Version int    `json:"version"` // WalletBindingVersion
	Peer    string `json:"peer"`    // the peer ID, canonical text
	Wallet  string `json:"wallet"`  // "0x" and 40 lowercase hex digits
	// Signature is the wallet key's personal_sign signature of
	// WalletBindingMessage(Peer): "0x" and 130 lowercase hex digits, r ‖ s
	// ‖ v with v 27 or 28 and s in the lower half of the curve order.
	Signature string `json:"signature"`
}

// NewWalletBinding binds peerID to key's wallet.
func NewWalletBinding(peerID string, key *ecdsa.PrivateKey) (WalletBinding, error) {
	sig, err := ethcrypto.Sign(accounts.TextHash(WalletBindingMessage(peerID)), key)
	if err != nil {
		return WalletBinding{}, fmt.Errorf("records: signing the wallet binding: %w", err)
	}
	sig[64] += 27
	return WalletBinding{
		Version: WalletBindingVersion, Peer: peerID,
		Wallet:    strings.ToLower(ethcrypto.PubkeyToAddress(key.PublicKey).Hex()),
		Signature: "0x" + hex.EncodeToString(sig),
	}, nil
}

// DecodeWalletBinding decodes a binding and checks its fields' forms
// (size limit, no unknown fields, canonical peer ID, wallet and
// signature). It does not check the signature: Verify does.
func DecodeWalletBinding(b []byte) (WalletBinding, error) {
	var wb WalletBinding
	if err := strictjson.Decode(b, MaxWalletBinding, &wb); err != nil {
		return wb, fmt.Errorf("%w: %w", ErrBadBinding, err)
	}
	if wb.Version != WalletBindingVersion {
		return wb, fmt.Errorf("%w: version %d", ErrBadBinding, wb.Version)
	}
	if id, err := peer.Decode(wb.Peer); err != nil || id.String() != wb.Peer {
		return wb, fmt.Errorf("%w: peer %q is not a canonical peer ID", ErrBadBinding, wb.Peer)
	}
	if _, err := microjob.ParseWallet(wb.Wallet); err != nil {
		return wb, fmt.Errorf("%w: %w", ErrBadBinding, err)
	}
	if _, err := wb.sig(); err != nil {
		return wb, err
	}
	return wb, nil
}

// sig parses Signature into go-ethereum's form (v 0 or 1), refusing any
// other encoding of the same signature.
func (wb WalletBinding) sig() ([]byte, error) {
	s := wb.Signature
	if len(s) != 132 || !strings.HasPrefix(s, "0x") || strings.ToLower(s) != s {
		return nil, fmt.Errorf("%w: signature: want 0x and 130 lowercase hex digits", ErrBadBinding)
	}
	sig, err := hex.DecodeString(s[2:])
	if err != nil {
		return nil, fmt.Errorf("%w: signature: %w", ErrBadBinding, err)
	}
	if sig[64] != 27 && sig[64] != 28 {
		return nil, fmt.Errorf("%w: signature v %d, want 27 or 28", ErrBadBinding, sig[64])
	}
	sig[64] -= 27
	r, sv := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:64])
	if !ethcrypto.ValidateSignatureValues(sig[64], r, sv, true) {
		return nil, fmt.Errorf("%w: signature values out of range (s must be in the lower half)", ErrBadBinding)
	}
	return sig, nil
}

// Verify checks that the signature recovers to Wallet over the message
// naming Peer (ecrecover), and that Peer is author, the peer the record
// was stored by.
func (wb WalletBinding) Verify(author string) error {
	if wb.Peer != author {
		return fmt.Errorf("%w: %w: %s, stored by %s", ErrBadBinding, ErrBindingPeer, wb.Peer, author)
	}
	sig, err := wb.sig()
	if err != nil {
		return err
	}
	pub, err := ethcrypto.SigToPub(accounts.TextHash(WalletBindingMessage(wb.Peer)), sig)
	if err != nil {
		return fmt.Errorf("%w: %w: %w", ErrBadBinding, ErrBindingSignature, err)
	}
	if got := strings.ToLower(ethcrypto.PubkeyToAddress(*pub).Hex()); got != wb.Wallet {
		return fmt.Errorf("%w: %w: it recovers to %s, the binding claims %s", ErrBadBinding, ErrBindingSignature, got, wb.Wallet)
	}
	return nil
}

// OpenWalletBinding decodes and verifies the binding record r: its type,
// its key (the binding key of its author) and its payload.
func OpenWalletBinding(r crdt.Record) (WalletBinding, error) {
	author := r.AuthorText()
	if r.Type != WalletBindingType || r.Key != WalletBindingKey(author) {
		return WalletBinding{}, fmt.Errorf("%w: %s record %q by %s", ErrBadBinding, r.Type, r.Key, author)
	}
	wb, err := DecodeWalletBinding(r.Payload)
	if err != nil {
		return wb, err
	}
	return wb, wb.Verify(author)
}
