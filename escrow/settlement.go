package escrow

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// MaxMembers bounds the members of one job (the contract's MAX_MEMBERS):
// the largest count the member byte of a job's record holds.
const MaxMembers = 255

// MaxPayees bounds payees, culprits and signers of one settlement: each is
// a distinct member of the job.
const MaxPayees = MaxMembers

// EIP-712 names; they are part of every signed digest, so changing one
// invalidates every signature made before.
const (
	domainName    = "jobmesh-escrow"
	domainVersion = "2"
	settlementSig = "Settlement(bytes32 jobKey,bytes32 seed,bytes32 resultRoot,bytes32 verifierHash," +
		"address[] payees,uint256[] amounts,address[] culprits)"
)

var (
	domainTypeHash     = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	settlementTypeHash = crypto.Keccak256Hash([]byte(settlementSig))
	maxAmount          = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 96), big.NewInt(1))
	halfN              = new(big.Int).Rsh(crypto.S256().Params().N, 1)
)

// Domain is the EIP-712 domain of one deployed escrow: a signature made for
// one chain and contract is worthless on any other.
type Domain struct {
	ChainID  *big.Int
	Contract common.Address
}

// Separator is the EIP-712 domain separator, as the contract's
// domainSeparator() computes it.
func (d Domain) Separator() common.Hash {
	chainID := d.ChainID
	if chainID == nil {
		chainID = new(big.Int)
	}
	return crypto.Keccak256Hash(
		domainTypeHash[:],
		crypto.Keccak256([]byte(domainName)),
		crypto.Keccak256([]byte(domainVersion)),
		common.LeftPadBytes(chainID.Bytes(), 32),
		common.LeftPadBytes(d.Contract[:], 32),
	)
}

// Settlement is a job's verdict as the escrow contract takes it: the seed
// the job was created with, what the result is, who is paid how much and
// who is slashed.
type Settlement struct {
	Key          common.Hash // JobKey(creator, job ID): the job on chain
	Seed         common.Hash // keccak256(Seed) is the job's seed commitment
	ResultRoot   common.Hash
	VerifierHash common.Hash
	Payees       []common.Address // strictly ascending
	Amounts      []*big.Int       // Amounts[i] goes to Payees[i]
	Culprits     []common.Address // strictly ascending, none a payee
}

// JobKey is the key a creator's job lives under on chain, as the
// contract's jobKey computes it: keccak256(creator ‖ jobID). Binding the
// key to its creator means no other account can create, abort or settle
// the job under the creator's job ID.
func JobKey(creator common.Address, jobID common.Hash) common.Hash {
	return crypto.Keccak256Hash(creator[:], jobID[:])
}

// SeedCommitment is the commitment createJob takes for a seed.
func SeedCommitment(seed common.Hash) common.Hash {
	return crypto.Keccak256Hash(seed[:])
}

// NewSettlement builds a Settlement from a payout map, in the order the
// contract requires.
func NewSettlement(key, seed, resultRoot, verifierHash common.Hash, payouts map[common.Address]*big.Int, culprits []common.Address) Settlement {
	s := Settlement{Key: key, Seed: seed, ResultRoot: resultRoot, VerifierHash: verifierHash}
	for a := range payouts {
		s.Payees = append(s.Payees, a)
	}
	slices.SortFunc(s.Payees, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	for _, a := range s.Payees {
		s.Amounts = append(s.Amounts, new(big.Int).Set(payouts[a]))
	}
	s.Culprits = slices.Clone(culprits)
	slices.SortFunc(s.Culprits, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	return s
}

// Validate checks the rules the contract enforces on the lists, so a bad
// settlement fails before it costs gas.
func (s Settlement) Validate() error {
	n := len(s.Payees)
	if n == 0 || n > MaxPayees || len(s.Culprits) > MaxPayees {
		return fmt.Errorf("%w: %d payees, %d culprits (1..%d)", ErrBadSettlement, n, len(s.Culprits), MaxPayees)
	}
	if len(s.Amounts) != n {
		return fmt.Errorf("%w: %d payees but %d amounts", ErrBadSettlement, n, len(s.Amounts))
	}
	total := new(big.Int)
	for i, a := range s.Amounts {
		if a == nil || a.Sign() < 0 || a.Cmp(maxAmount) > 0 {
			return fmt.Errorf("%w: amount %d out of range", ErrBadSettlement, i)
		}
		total.Add(total, a)
	}
	if total.Cmp(maxAmount) > 0 {
		return fmt.Errorf("%w: total payout out of range", ErrBadSettlement)
	}
	if err := ascending(s.Payees); err != nil {
		return fmt.Errorf("%w: payees: %v", ErrBadSettlement, err)
	}
	if err := ascending(s.Culprits); err != nil {
		return fmt.Errorf("%w: culprits: %v", ErrBadSettlement, err)
	}
	for _, c := range s.Culprits {
		if _, found := slices.BinarySearchFunc(s.Payees, c, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) }); found {
			return fmt.Errorf("%w: culprit %s is a payee", ErrBadSettlement, c)
		}
	}
	return nil
}

func ascending(list []common.Address) error {
	var prev common.Address
	for i, a := range list {
		if bytes.Compare(a[:], prev[:]) <= 0 {
			return fmt.Errorf("entry %d (%s) not above the previous one", i, a)
		}
		prev = a
	}
	return nil
}

// Total is the sum of the amounts.
func (s Settlement) Total() *big.Int {
	t := new(big.Int)
	for _, a := range s.Amounts {
		if a != nil {
			t.Add(t, a)
		}
	}
	return t
}

// StructHash is the EIP-712 hashStruct of the settlement.
func (s Settlement) StructHash() common.Hash {
	packAddrs := func(list []common.Address) []byte {
		out := make([]byte, 0, 32*len(list))
		for _, a := range list {
			out = append(out, common.LeftPadBytes(a[:], 32)...)
		}
		return crypto.Keccak256(out)
	}
	amounts := make([]byte, 0, 32*len(s.Amounts))
	for _, a := range s.Amounts {
		var w [32]byte
		if a != nil {
			a.FillBytes(w[:])
		}
		amounts = append(amounts, w[:]...)
	}
	return crypto.Keccak256Hash(
		settlementTypeHash[:], s.Key[:], s.Seed[:], s.ResultRoot[:], s.VerifierHash[:],
		packAddrs(s.Payees), crypto.Keccak256(amounts), packAddrs(s.Culprits),
	)
}

// Digest is the EIP-712 digest a member signs.
func (s Settlement) Digest(d Domain) common.Hash {
	sep := d.Separator()
	h := s.StructHash()
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], h[:])
}

// SignSettlement signs the settlement's digest with a processor's key. The
// signature is 65 bytes r‖s‖v with v in {27, 28}, as the contract takes it.
func SignSettlement(key *ecdsa.PrivateKey, d Domain, s Settlement) ([]byte, error) {
	digest := s.Digest(d)
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, fmt.Errorf("escrow: sign settlement: %w", err)
	}
	sig[64] += 27
	return sig, nil
}

// RecoverSigner returns the address that made sig over the settlement, with
// the contract's rules: 65 bytes, v in {27, 28}, s in the lower half.
func RecoverSigner(d Domain, s Settlement, sig []byte) (common.Address, error) {
	if len(sig) != 65 {
		return common.Address{}, fmt.Errorf("%w: %d bytes, want 65", ErrBadSignature, len(sig))
	}
	v := sig[64]
	if v != 27 && v != 28 {
		return common.Address{}, fmt.Errorf("%w: v=%d", ErrBadSignature, v)
	}
	if new(big.Int).SetBytes(sig[32:64]).Cmp(halfN) > 0 {
		return common.Address{}, fmt.Errorf("%w: high s", ErrBadSignature)
	}
	norm := slices.Clone(sig)
	norm[64] -= 27
	digest := s.Digest(d)
	pub, err := crypto.SigToPub(digest[:], norm)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// VerifySettlement checks that sig is signer's signature over the settlement.
func VerifySettlement(d Domain, s Settlement, signer common.Address, sig []byte) error {
	got, err := RecoverSigner(d, s, sig)
	if err != nil {
		return err
	}
	if got != signer {
		return fmt.Errorf("%w: signed by %s, not %s", ErrBadSignature, got, signer)
	}
	return nil
}

// SignedSettlement is one member's signature over a settlement, as
// processors exchange it before one of them calls settle.
type SignedSettlement struct {
	Domain     Domain
	Settlement Settlement
	Signer     common.Address
	Signature  []byte
}

// Wire format of a SignedSettlement, version 2 (all integers big-endian):
//
//	version   1 byte  = 2
//	chainID   32      uint256
//	contract  20
//	key, seed, resultRoot, verifierHash   4 × 32
//	nPayees   2, then nPayees × (address 20, amount 32)
//	nCulprits 2, then nCulprits × address 20
//	signer    20
//	signature 65
//
// Version 1 carried the job ID where version 2 carries the job's key, and
// was signed in EIP-712 domain version "1"; a decoder refuses it.
const (
	wireVersion = 2
	// MaxSignedSettlementSize is the largest encoding a decoder accepts.
	MaxSignedSettlementSize = 1 + 32 + 20 + 4*32 + 2 + MaxPayees*52 + 2 + MaxPayees*20 + 20 + 65
)

// MarshalBinary encodes the signed settlement in wire format version 2.
func (m SignedSettlement) MarshalBinary() ([]byte, error) {
	s := m.Settlement
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(m.Signature) != 65 {
		return nil, fmt.Errorf("%w: signature is %d bytes", ErrBadSignature, len(m.Signature))
	}
	if m.Domain.ChainID == nil || m.Domain.ChainID.Sign() < 0 || m.Domain.ChainID.BitLen() > 256 {
		return nil, fmt.Errorf("%w: chain ID out of range", ErrBadSettlement)
	}
	out := make([]byte, 0, 1+32+20+128+4+52*len(s.Payees)+20*len(s.Culprits)+85)
	out = append(out, wireVersion)
	out = append(out, common.LeftPadBytes(m.Domain.ChainID.Bytes(), 32)...)
	out = append(out, m.Domain.Contract[:]...)
	out = append(out, s.Key[:]...)
	out = append(out, s.Seed[:]...)
	out = append(out, s.ResultRoot[:]...)
	out = append(out, s.VerifierHash[:]...)
	out = binary.BigEndian.AppendUint16(out, uint16(len(s.Payees)))
	for i, p := range s.Payees {
		out = append(out, p[:]...)
		var w [32]byte
		s.Amounts[i].FillBytes(w[:])
		out = append(out, w[:]...)
	}
	out = binary.BigEndian.AppendUint16(out, uint16(len(s.Culprits)))
	for _, c := range s.Culprits {
		out = append(out, c[:]...)
	}
	out = append(out, m.Signer[:]...)
	out = append(out, m.Signature...)
	return out, nil
}

// DecodeSignedSettlement decodes a wire-format signed settlement and checks
// it: size limit, version, the settlement's rules, and that the signature is
// the named signer's.
func DecodeSignedSettlement(b []byte) (SignedSettlement, error) {
	var m SignedSettlement
	if len(b) > MaxSignedSettlementSize {
		return m, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), MaxSignedSettlementSize)
	}
	r := reader{b: b}
	if v := r.take(1); v == nil || v[0] != wireVersion {
		return m, fmt.Errorf("%w: unknown version", ErrBadEncoding)
	}
	if c := r.take(32); c != nil {
		m.Domain.ChainID = new(big.Int).SetBytes(c)
	}
	copy(m.Domain.Contract[:], r.take(20))
	s := &m.Settlement
	for _, h := range []*common.Hash{&s.Key, &s.Seed, &s.ResultRoot, &s.VerifierHash} {
		copy(h[:], r.take(32))
	}
	n := r.uint16()
	if n > MaxPayees {
		return m, fmt.Errorf("%w: %d payees", ErrBadEncoding, n)
	}
	for range n {
		var a common.Address
		copy(a[:], r.take(20))
		s.Payees = append(s.Payees, a)
		s.Amounts = append(s.Amounts, new(big.Int).SetBytes(r.take(32)))
	}
	k := r.uint16()
	if k > MaxPayees {
		return m, fmt.Errorf("%w: %d culprits", ErrBadEncoding, k)
	}
	for range k {
		var a common.Address
		copy(a[:], r.take(20))
		s.Culprits = append(s.Culprits, a)
	}
	copy(m.Signer[:], r.take(20))
	m.Signature = slices.Clone(r.take(65))
	if r.short {
		return SignedSettlement{}, fmt.Errorf("%w: truncated", ErrBadEncoding)
	}
	if len(r.b) != 0 {
		return SignedSettlement{}, fmt.Errorf("%w: %d trailing bytes", ErrBadEncoding, len(r.b))
	}
	if err := s.Validate(); err != nil {
		return SignedSettlement{}, err
	}
	if err := VerifySettlement(m.Domain, *s, m.Signer, m.Signature); err != nil {
		return SignedSettlement{}, err
	}
	return m, nil
}

// reader takes fixed-size fields and remembers running short, so the
// decoder checks once at the end.
type reader struct {
	b     []byte
	short bool
}

func (r *reader) take(n int) []byte {
	if r.short || len(r.b) < n {
		r.short = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) uint16() int {
	v := r.take(2)
	if v == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(v))
}
