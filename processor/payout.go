package processor

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
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

// Errors of on-chain settlement.
var (
	// ErrNotSettleable: the verdict cannot be paid (no credited result).
	ErrNotSettleable = errors.New("processor: verdict cannot be settled")
	// ErrUnfunded: the job's escrow is not funded for its price.
	ErrUnfunded = errors.New("processor: job escrow not funded")
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

// DeriveSettlement is the settlement a verified job's verdict implies. It
// is a pure function of its inputs, so every processor derives the same
// one from the same records and the mesh's dispatch config:
//
//   - payees: the wallets of the verdict's results whose processor is not
//     a culprit (credited results);
//   - weights: dispatch.SpeedFeeWeights: each credited result in MacroJob
//     m adds cfg.FeeBasePoints + ts to its wallet's weight, ts being its
//     processor's task score in m from the verdict record's rounds (0
//     when the record has none, which leaves the weights proportional to
//     the MicroJobs credited); amounts: dispatch.SplitFee(price, weights),
//     which pays out the price exactly;
//   - culprits: culpritWallets, sorted, without duplicates and payees
//     (the contract slashes them and refuses a culprit that is paid);
//     the caller passes the bound wallets of the verdict's culprits that
//     are members of the job (the contract slashes no other);
//   - resultRoot: keccak256 of the output CID's binary form;
//   - verifierHash: VerifierDigest of the verdict;
//   - seed: the job's seed, which the escrow's commitment binds.
func DeriveSettlement(cfg dispatch.Config, info *jobs.JobInfo, rec VerdictRecord, v microjob.Verdict, culpritWallets []string) (escrow.Settlement, error) {
	if !v.Verified {
		return escrow.Settlement{}, fmt.Errorf("%w: verdict not verified", ErrNotSettleable)
	}
	out, err := cid.Decode(rec.Output)
	if err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: output %q: %v", ErrNotSettleable, rec.Output, err)
	}
	if err := checkRounds(rec.Rounds, v); err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	culprit := map[string]bool{}
	for _, c := range append(slices.Clone(rec.Culprits), v.Culprits...) {
		culprit[c] = true
	}
	credits := map[common.Address]int{}
	for _, r := range v.Results {
		if culprit[r.Processor] {
			continue
		}
		a, err := microjob.ParseWallet(r.Wallet)
		if err != nil {
			return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
		}
		credits[a]++
	}
	if len(credits) == 0 {
		return escrow.Settlement{}, fmt.Errorf("%w: no credited result", ErrNotSettleable)
	}
	if len(credits) > escrow.MaxPayees {
		return escrow.Settlement{}, fmt.Errorf("%w: %d payees, limit %d", ErrNotSettleable, len(credits), escrow.MaxPayees)
	}
	payees := make([]common.Address, 0, len(credits))
	for a := range credits {
		payees = append(payees, a)
	}
	slices.SortFunc(payees, func(a, b common.Address) int { return a.Cmp(b) })
	weights, err := speedWeights(cfg, info.ID(), rec.Rounds, v, culprit, payees)
	if err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	amounts, err := dispatch.SplitFee(info.PriceWei, weights)
	if err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	payouts := make(map[common.Address]*big.Int, len(payees))
	for i, a := range payees {
		payouts[a] = amounts[i]
	}
	var culprits []common.Address
	for _, w := range culpritWallets {
		a, err := microjob.ParseWallet(w)
		if err != nil {
			continue
		}
		if _, paid := credits[a]; paid || slices.Contains(culprits, common.Address(a)) {
			continue
		}
		culprits = append(culprits, a)
	}
	if len(culprits) > escrow.MaxPayees {
		culprits = culprits[:escrow.MaxPayees]
	}
	s := escrow.NewSettlement(escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())), common.Hash(info.Seed),
		crypto.Keccak256Hash(out.Bytes()), VerifierDigest(v), payouts, culprits)
	if err := s.Validate(); err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	return s, nil
}

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

// speedWeights are the fee weights of payees (ascending addresses): each
// credited result of the verdict paid by its wallet, with its processor's
// task score in the result's MacroJob from rounds.
func speedWeights(cfg dispatch.Config, id jobs.ID, rounds []RoundOrder, v microjob.Verdict, culprit map[string]bool, payees []common.Address) ([]uint64, error) {
	tasks := make([]dispatch.TaskOutcome, len(rounds))
	task := make(map[uint64]int, len(rounds))
	for i, r := range rounds {
		tasks[i] = r.taskOutcome(id)
		task[r.Macro] = i
	}
	payee := make(map[common.Address]int, len(payees))
	for i, a := range payees {
		payee[a] = i
	}
	var fc []dispatch.FeeCredit
	for _, r := range v.Results {
		if culprit[r.Processor] {
			continue
		}
		a, err := microjob.ParseWallet(r.Wallet)
		if err != nil {
			return nil, err
		}
		t, ok := task[r.Macro]
		if !ok {
			t = -1
		}
		fc = append(fc, dispatch.FeeCredit{Payee: payee[a], Task: t, Processor: r.Processor})
	}
	return dispatch.SpeedFeeWeights(cfg, len(payees), tasks, fc)
}
