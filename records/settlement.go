package records

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/microjob"
)

// Versions and size limits of the on-chain settlement records (see
// docs/PROTOCOL.md).
const (
	// SettlementRecordVersion and SettledRecordVersion are the versions of
	// those JSON records.
	SettlementRecordVersion = 1
	SettledRecordVersion    = 1
	// MaxSettlementRecord bounds a SettlementRecord: MaxPayees payees with
	// amounts and as many culprits, with room for the JSON.
	MaxSettlementRecord = 64 << 10
	// MaxSettledRecord bounds a SettledRecord.
	MaxSettledRecord = 1 << 10
)

// SettlementRecord is a proposed settlement in text form.
type SettlementRecord struct {
	Version      int      `json:"version"` // SettlementRecordVersion
	JobID        string   `json:"job"`     // the job's escrow key (escrow.JobKey), 0x-prefixed 32-byte hex, as all hashes here
	Seed         string   `json:"seed"`
	ResultRoot   string   `json:"resultRoot"`
	VerifierHash string   `json:"verifierHash"`
	Payees       []string `json:"payees"`   // lowercase 0x addresses, ascending
	Amounts      []string `json:"amounts"`  // decimal wei, one per payee
	Culprits     []string `json:"culprits"` // lowercase 0x addresses, ascending
}

// NewSettlementRecord renders s.
func NewSettlementRecord(s escrow.Settlement) SettlementRecord {
	r := SettlementRecord{
		Version: SettlementRecordVersion, JobID: s.Key.Hex(), Seed: s.Seed.Hex(),
		ResultRoot: s.ResultRoot.Hex(), VerifierHash: s.VerifierHash.Hex(),
		Payees: []string{}, Amounts: []string{}, Culprits: []string{},
	}
	for i, p := range s.Payees {
		r.Payees = append(r.Payees, strings.ToLower(p.Hex()))
		r.Amounts = append(r.Amounts, s.Amounts[i].String())
	}
	for _, c := range s.Culprits {
		r.Culprits = append(r.Culprits, strings.ToLower(c.Hex()))
	}
	return r
}

// DecodeSettlementRecord decodes and checks a settlement record: size,
// version, field forms and the contract's list rules.
func DecodeSettlementRecord(b []byte) (escrow.Settlement, error) {
	if len(b) > MaxSettlementRecord {
		return escrow.Settlement{}, fmt.Errorf("%w: settlement of %d bytes, limit %d", ErrBadRecord, len(b), MaxSettlementRecord)
	}
	var r SettlementRecord
	if err := decodeStrict(b, &r); err != nil {
		return escrow.Settlement{}, err
	}
	if r.Version != SettlementRecordVersion {
		return escrow.Settlement{}, fmt.Errorf("%w: settlement version %d", ErrBadRecord, r.Version)
	}
	var s escrow.Settlement
	for _, f := range []struct {
		text string
		out  *common.Hash
	}{{r.JobID, &s.Key}, {r.Seed, &s.Seed}, {r.ResultRoot, &s.ResultRoot}, {r.VerifierHash, &s.VerifierHash}} {
		h, err := parseHash(f.text)
		if err != nil {
			return escrow.Settlement{}, err
		}
		*f.out = h
	}
	if len(r.Payees) != len(r.Amounts) || len(r.Payees) > escrow.MaxPayees || len(r.Culprits) > escrow.MaxPayees {
		return escrow.Settlement{}, fmt.Errorf("%w: %d payees, %d amounts, %d culprits", ErrBadRecord, len(r.Payees), len(r.Amounts), len(r.Culprits))
	}
	for i, p := range r.Payees {
		a, err := microjob.ParseWallet(p)
		if err != nil {
			return escrow.Settlement{}, fmt.Errorf("%w: payee %d: %w", ErrBadRecord, i, err)
		}
		amt, ok := new(big.Int).SetString(r.Amounts[i], 10)
		if !ok || amt.Sign() < 0 || amt.String() != r.Amounts[i] {
			return escrow.Settlement{}, fmt.Errorf("%w: amount %d %q", ErrBadRecord, i, r.Amounts[i])
		}
		s.Payees = append(s.Payees, a)
		s.Amounts = append(s.Amounts, amt)
	}
	for i, c := range r.Culprits {
		a, err := microjob.ParseWallet(c)
		if err != nil {
			return escrow.Settlement{}, fmt.Errorf("%w: culprit %d: %w", ErrBadRecord, i, err)
		}
		s.Culprits = append(s.Culprits, a)
	}
	if err := s.Validate(); err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	return s, nil
}

func parseHash(s string) (common.Hash, error) {
	if len(s) != 66 || !strings.HasPrefix(s, "0x") || strings.ToLower(s) != s {
		return common.Hash{}, fmt.Errorf("%w: hash %q: want 0x and 64 lowercase hex digits", ErrBadRecord, s)
	}
	var h common.Hash
	if _, err := hex.Decode(h[:], []byte(s[2:])); err != nil {
		return common.Hash{}, fmt.Errorf("%w: hash %q: %v", ErrBadRecord, s, err)
	}
	return h, nil
}

// SettledRecord says a job's settle transaction succeeded.
type SettledRecord struct {
	Version   int    `json:"version"`   // SettledRecordVersion
	Tx        string `json:"tx"`        // transaction hash, 0x and 64 lowercase hex digits
	Block     uint64 `json:"block"`     // block it was mined in
	Submitter string `json:"submitter"` // peer ID of the processor that sent it
}

// DecodeSettledRecord decodes and checks a settled record; author is the
// record's writer, who must be the submitter it names.
func DecodeSettledRecord(b []byte, author string) (SettledRecord, error) {
	if len(b) > MaxSettledRecord {
		return SettledRecord{}, fmt.Errorf("%w: settled record of %d bytes, limit %d", ErrBadRecord, len(b), MaxSettledRecord)
	}
	var r SettledRecord
	if err := decodeStrict(b, &r); err != nil {
		return r, err
	}
	if r.Version != SettledRecordVersion {
		return r, fmt.Errorf("%w: settled version %d", ErrBadRecord, r.Version)
	}
	if _, err := parseHash(r.Tx); err != nil {
		return r, err
	}
	if r.Submitter != author {
		return r, fmt.Errorf("%w: settled record names %q, written by %q", ErrBadRecord, r.Submitter, author)
	}
	return r, nil
}

// DecodeSignatureRecord decodes a member's signature record (the
// escrow.SignedSettlement wire format, size-limited, version 2) and checks
// the signature.
func DecodeSignatureRecord(b []byte) (escrow.SignedSettlement, error) {
	m, err := escrow.DecodeSignedSettlement(b)
	if err != nil {
		return m, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	return m, nil
}

// ResultRoot is the settlement's resultRoot of an output: keccak256 of
// the CID's binary form.
func ResultRoot(output cid.Cid) common.Hash { return crypto.Keccak256Hash(output.Bytes()) }

// VerifierDigest hashes a verdict's verifier hashes: keccak256 over, for
// each MacroJob index in ascending order, the index as 8 bytes big-endian,
// the number of hashes as 4 bytes big-endian, then each hash's 32 bytes
// (hashes that are not 32-byte hex count as 32 zero bytes).
func VerifierDigest(v microjob.Verdict) common.Hash {
	macros := make([]uint64, 0, len(v.VerifierHashes))
	for m := range v.VerifierHashes {
		macros = append(macros, m)
	}
	slices.Sort(macros)
	var buf []byte
	for _, m := range macros {
		hs := v.VerifierHashes[m]
		buf = binary.BigEndian.AppendUint64(buf, m)
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(hs)))
		for _, h := range hs {
			var b [32]byte
			if d, err := hex.DecodeString(h); err == nil && len(d) == 32 {
				copy(b[:], d)
			}
			buf = append(buf, b[:]...)
		}
	}
	return crypto.Keccak256Hash(buf)
}
