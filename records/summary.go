package records

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/internal/strictjson"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// SummaryPrefix is where a job's outcome summaries live, one per author.
func SummaryPrefix(id jobs.ID) string { return JobKey(id) + "/summary/" }

// SummaryKey is where author keeps its summary of a job's outcome.
func SummaryKey(id jobs.ID, author string) string { return SummaryPrefix(id) + author }

// Version, states and size limit of the outcome summary.
const (
	SummaryRecordVersion = 1
	// SummarySettled: the job settled on chain (Tx and Block name the
	// settle transaction).
	SummarySettled = "settled"
	// SummaryVerified: a mesh without a chain accepted the verdict.
	SummaryVerified = "verified"
	// MaxSummaryRecord bounds a summary: its rounds name processors by
	// their place in Members, so a job of a few thousand MicroJobs
	// summarises in a few KB.
	MaxSummaryRecord = 64 << 10
	// MaxSummaryRounds bounds the rounds of one summary.
	MaxSummaryRounds = 4096
)

// SummaryRecord is a job's outcome in the mesh store: what a node that
// took no part in the job reads once the job's own store is gone (or was
// never held). With a chain it is checked against the settlement
// (settlement.CheckSummary): the output against the resultRoot, and the
// verdict digest, culprits and rounds against the verifierHash, which is
// their OutcomeDigest.
type SummaryRecord struct {
	Version int    `json:"version"` // SummaryRecordVersion
	State   string `json:"state"`   // SummarySettled or SummaryVerified
	Output  string `json:"output"`  // CID of the assembled output
	// Verdict is VerifierDigest of the verdict, 0x and 64 lowercase hex.
	Verdict string `json:"verdict"`
	// Culprits are the verdict's culprits (peer IDs), ascending.
	Culprits []string `json:"culprits"`
	// Members are the processors the rounds name, ascending, each once.
	Members []string `json:"members"`
	// Rounds are the verdict record's rounds with each processor named
	// by its index in Members.
	Rounds []SummaryRound `json:"rounds"`
	// Tx and Block name the settle transaction (SummarySettled only).
	Tx    string `json:"tx,omitempty"`
	Block uint64 `json:"block,omitempty"`
}

// SummaryRound is one RoundOrder with processors as indices in Members.
type SummaryRound struct {
	Macro       uint64 `json:"m"`
	Commits     []int  `json:"c"`
	Disclosures []int  `json:"d,omitempty"`
	Lockers     []int  `json:"l,omitempty"`
}

// NewSummary summarises the verdict record rec and its verdict v for
// state; tx and block name the settle transaction of a settled job.
func NewSummary(state string, rec VerdictRecord, v microjob.Verdict, tx common.Hash, block uint64) (SummaryRecord, error) {
	if err := CheckRounds(rec.Rounds, v); err != nil {
		return SummaryRecord{}, err
	}
	s := SummaryRecord{
		Version: SummaryRecordVersion, State: state, Output: rec.Output,
		Verdict:  VerifierDigest(v).Hex(),
		Culprits: outcomeCulprits(rec, v), Members: []string{}, Rounds: []SummaryRound{},
	}
	if state == SummarySettled {
		s.Tx, s.Block = tx.Hex(), block
	}
	for _, r := range rec.Rounds {
		s.Members = append(append(append(s.Members, r.Commits...), r.Disclosures...), r.Lockers...)
	}
	slices.Sort(s.Members)
	s.Members = slices.Compact(s.Members)
	place := make(map[string]int, len(s.Members))
	for i, p := range s.Members {
		place[p] = i
	}
	index := func(ps []string) []int {
		if len(ps) == 0 {
			return nil
		}
		out := make([]int, len(ps))
		for i, p := range ps {
			out[i] = place[p]
		}
		return out
	}
	for _, r := range rec.Rounds {
		s.Rounds = append(s.Rounds, SummaryRound{Macro: r.Macro, Commits: index(r.Commits), Disclosures: index(r.Disclosures), Lockers: index(r.Lockers)})
	}
	b, err := EncodeSummaryRecord(s)
	if err != nil {
		return SummaryRecord{}, err
	}
	return DecodeSummaryRecord(b)
}

// EncodeSummaryRecord encodes s as its record payload.
func EncodeSummaryRecord(s SummaryRecord) ([]byte, error) { return json.Marshal(s) }

// DecodeSummaryRecord decodes and checks a summary: its version and
// state, the output CID, the verdict digest, culprits and members in
// canonical peer-ID text, ascending and each once, every member named by
// a round, and rounds that keep CheckRounds' rules (MacroJobs ascending,
// 1 to dispatch.MaxTaskProcessors committers, disclosers among them,
// lockers beside them), with a settle transaction exactly when settled.
func DecodeSummaryRecord(b []byte) (SummaryRecord, error) {
	var s SummaryRecord
	if err := strictjson.Decode(b, MaxSummaryRecord, &s); err != nil {
		return s, fmt.Errorf("%w: summary: %w", ErrBadRecord, err)
	}
	if s.Version != SummaryRecordVersion {
		return s, fmt.Errorf("%w: summary version %d", ErrBadRecord, s.Version)
	}
	switch s.State {
	case SummarySettled:
		if _, err := parseHash(s.Tx); err != nil || s.Block == 0 {
			return s, fmt.Errorf("%w: settled summary with tx %q at block %d", ErrBadRecord, s.Tx, s.Block)
		}
	case SummaryVerified:
		if s.Tx != "" || s.Block != 0 {
			return s, fmt.Errorf("%w: a verified summary names a transaction", ErrBadRecord)
		}
	default:
		return s, fmt.Errorf("%w: summary state %q", ErrBadRecord, s.State)
	}
	if c, err := cid.Decode(s.Output); err != nil || c.String() != s.Output {
		return s, fmt.Errorf("%w: summary output %q is not a CID in canonical form", ErrBadRecord, s.Output)
	}
	if _, err := parseHash(s.Verdict); err != nil {
		return s, err
	}
	for _, list := range [][]string{s.Culprits, s.Members} {
		if err := checkPeerSet(list); err != nil {
			return s, err
		}
	}
	if err := checkSummaryRounds(s); err != nil {
		return s, err
	}
	return s, nil
}

// checkPeerSet: canonical peer IDs, strictly ascending.
func checkPeerSet(ps []string) error {
	if ps == nil {
		return fmt.Errorf("%w: summary: a peer list is missing", ErrBadRecord)
	}
	for i, p := range ps {
		if err := checkPeer(p); err != nil {
			return fmt.Errorf("%w: summary: %w", ErrBadRecord, err)
		}
		if i > 0 && p <= ps[i-1] {
			return fmt.Errorf("%w: summary: peers not ascending at %q", ErrBadRecord, p)
		}
	}
	return nil
}

func checkSummaryRounds(s SummaryRecord) error {
	if s.Rounds == nil || len(s.Rounds) > MaxSummaryRounds {
		return fmt.Errorf("%w: summary: rounds missing or more than %d", ErrBadRecord, MaxSummaryRounds)
	}
	used := make([]bool, len(s.Members))
	for i, r := range s.Rounds {
		if i > 0 && r.Macro <= s.Rounds[i-1].Macro {
			return fmt.Errorf("%w: summary: rounds of MacroJob %d after %d", ErrBadRecord, r.Macro, s.Rounds[i-1].Macro)
		}
		if len(r.Commits) == 0 || len(r.Commits)+len(r.Lockers) > dispatch.MaxTaskProcessors || len(r.Disclosures) > len(r.Commits) {
			return fmt.Errorf("%w: summary: MacroJob %d: %d commits, %d disclosures, %d lockers", ErrBadRecord, r.Macro, len(r.Commits), len(r.Disclosures), len(r.Lockers))
		}
		if r.Disclosures != nil && len(r.Disclosures) == 0 || r.Lockers != nil && len(r.Lockers) == 0 {
			return fmt.Errorf("%w: summary: MacroJob %d: an empty list is left out, not written", ErrBadRecord, r.Macro)
		}
		committed := map[int]bool{}
		for _, m := range r.Commits {
			committed[m] = true
		}
		seen := map[int]bool{}
		for _, m := range slices.Concat(r.Commits, r.Lockers) {
			if m < 0 || m >= len(s.Members) || seen[m] {
				return fmt.Errorf("%w: summary: MacroJob %d: member %d out of range or listed twice", ErrBadRecord, r.Macro, m)
			}
			seen[m], used[m] = true, true
		}
		disclosed := map[int]bool{}
		for _, m := range r.Disclosures {
			if !committed[m] || disclosed[m] {
				return fmt.Errorf("%w: summary: MacroJob %d: discloser %d did not commit or is listed twice", ErrBadRecord, r.Macro, m)
			}
			disclosed[m] = true
		}
	}
	if i := slices.Index(used, false); i >= 0 {
		return fmt.Errorf("%w: summary: member %q is in no round", ErrBadRecord, s.Members[i])
	}
	return nil
}

// RoundOrders returns the summary's rounds with peer IDs, as the verdict
// record held them.
func (s SummaryRecord) RoundOrders() []RoundOrder {
	names := func(ix []int) []string {
		if len(ix) == 0 {
			return nil
		}
		out := make([]string, len(ix))
		for i, m := range ix {
			out[i] = s.Members[m]
		}
		return out
	}
	out := make([]RoundOrder, len(s.Rounds))
	for i, r := range s.Rounds {
		out[i] = RoundOrder{Macro: r.Macro, Commits: names(r.Commits), Disclosures: names(r.Disclosures), Lockers: names(r.Lockers)}
	}
	return out
}

// Digest is the OutcomeDigest the summary claims: what the settlement's
// verifierHash must be.
func (s SummaryRecord) Digest() common.Hash {
	return outcomeDigest(common.HexToHash(s.Verdict), s.RoundOrders(), s.Culprits)
}

// OutcomeDigest is a verified verdict's settlement verifierHash: keccak256
// of VerifierDigest(v) (32 bytes) ‖ RoundsDigest(rec.Rounds) (32 bytes) ‖
// the culprits (rec's and v's, ascending, each once: per culprit its
// length as 2 bytes big-endian and its peer-ID text). The quorum that
// signs the settlement so vouches for the rounds and culprits too, and a
// node that does not hold the job's records checks a summary against it.
func OutcomeDigest(v microjob.Verdict, rec VerdictRecord) common.Hash {
	return outcomeDigest(VerifierDigest(v), rec.Rounds, outcomeCulprits(rec, v))
}

func outcomeDigest(verdict common.Hash, rounds []RoundOrder, culprits []string) common.Hash {
	rd := RoundsDigest(rounds)
	buf := append(append(verdict.Bytes(), rd.Bytes()...), peerList(culprits)...)
	return crypto.Keccak256Hash(buf)
}

// outcomeCulprits are rec's and v's culprits, ascending, each once.
func outcomeCulprits(rec VerdictRecord, v microjob.Verdict) []string {
	cs := slices.Concat(rec.Culprits, v.Culprits)
	slices.Sort(cs)
	cs = slices.Compact(cs)
	if cs == nil {
		cs = []string{}
	}
	return cs
}

// RoundsDigest hashes rounds: keccak256 over, for each round in order,
// its MacroJob index (8 bytes big-endian), then its committers,
// disclosers and lockers, each list as its length (2 bytes big-endian)
// and per peer its length (2 bytes big-endian) and its text.
func RoundsDigest(rounds []RoundOrder) common.Hash {
	var buf []byte
	for _, r := range rounds {
		buf = binary.BigEndian.AppendUint64(buf, r.Macro)
		for _, list := range [][]string{r.Commits, r.Disclosures, r.Lockers} {
			buf = append(buf, peerList(list)...)
		}
	}
	return crypto.Keccak256Hash(buf)
}

// peerList encodes ps: its length, then each peer as length and text
// (every length 2 bytes big-endian).
func peerList(ps []string) []byte {
	buf := binary.BigEndian.AppendUint16(nil, uint16(len(ps)))
	for _, p := range ps {
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(p)))
		buf = append(buf, p...)
	}
	return buf
}
