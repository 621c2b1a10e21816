package processor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// Store keys and record types of the processing flow, under the store's
// versioned namespace (see docs/PROTOCOL.md).
const (
	// JobType records hold a canonical JobInfo under JobKey.
	JobType = "job"
	// VerdictType records hold a VerdictRecord under VerdictKey.
	VerdictType = "verdict"
	// DisputeType records ask Third to re-run one disputed block.
	DisputeType = "dispute"
	// RerunType records hold the third processor's hash of a block.
	RerunType = "rerun"
	// RedoType records ask for a MicroJob to be run again by someone who
	// is not a culprit.
	RedoType = "redo"
)

// MaxRecord bounds the payload of the flow's own records.
const MaxRecord = 256 << 10

// ErrBadRecord is wrapped by decoding errors of the flow's records.
var ErrBadRecord = errors.New("processor: bad record")

// JobKey is where a job's JobInfo lives.
func JobKey(id jobs.ID) string { return "/jobs/" + id.String() }

// The records that decide a job's outcome (verdict, dispute, check and
// redo) live under per-author keys: the author's peer ID is the last key
// segment, and AuthorPolicy refuses any other author. A peer can write
// only under its own key, so it can add a record but never replace
// another peer's; readers choose among them (authors.go).

// VerdictPrefix is where a job's verdicts live, one per author.
func VerdictPrefix(id jobs.ID) string { return "/jobs/" + id.String() + "/verdict/" }

// VerdictKey is where author keeps its verdict of a job.
func VerdictKey(id jobs.ID, author string) string { return VerdictPrefix(id) + author }

// disputeBlock is the key prefix of one disputed block's records.
func disputeBlock(id jobs.ID, block uint64) string {
	return "/jobs/" + id.String() + "/dispute/" + strconv.FormatUint(block, 10)
}

// DisputeKey is where author asks for a re-run of a disputed block.
func DisputeKey(id jobs.ID, block uint64, author string) string {
	return disputeBlock(id, block) + "/" + author
}

// RerunKey is where processor stores its re-run of block.
func RerunKey(id jobs.ID, block uint64, processor string) string {
	return disputeBlock(id, block) + "/rerun/" + processor
}

// RedoKey is where author marks a MicroJob for redoing.
func RedoKey(id jobs.ID, micro jobs.ID, author string) string {
	return "/jobs/" + id.String() + "/redo/" + micro.String() + "/" + author
}

// authoredKinds are the job-level key segments under which the last
// segment of every key is its author.
var authoredKinds = map[string]bool{"verdict": true, "dispute": true, "check": true, "redo": true}

// keyAuthor returns the author a key under /jobs/<id>/<kind>/ names (its
// last segment), and whether the key is one of those.
func keyAuthor(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "/jobs/")
	if !ok || len(rest) < 65 || rest[64] != '/' {
		return "", false
	}
	kind, _, _ := strings.Cut(rest[65:], "/")
	if !authoredKinds[kind] {
		return "", false
	}
	return key[strings.LastIndexByte(key, '/')+1:], true
}

// ParseVerdictKey returns the job and the author of a verdict key.
func ParseVerdictKey(key string) (jobs.ID, string, bool) {
	id, ok := jobOfKey(key)
	if !ok {
		return jobs.ID{}, "", false
	}
	author, ok := strings.CutPrefix(key, VerdictPrefix(id))
	if !ok || author == "" || strings.Contains(author, "/") {
		return jobs.ID{}, "", false
	}
	return id, author, true
}

// VerdictRecord is the finalizer's record: the verdict, the processors
// found wrong, the assembled output and the submission order of every
// MacroJob (verdict record version 3; version 1 had no rounds, and a
// decoder of version 1 refuses a record that has them; version 2 had no
// body, and a decoder of version 2 refuses a body record as incomplete).
// A record whose verdict would not fit Config.MaxInlineVerdict keeps the
// verdict and rounds out of line, in a VerdictBody document on IPFS that
// Body names and BodySHA256 pins; read it with LoadVerdictRecord.
type VerdictRecord struct {
	Verdict  json.RawMessage `json:"verdict,omitempty"` // microjob.Verdict.Encode(); empty in a body record
	Culprits []string        `json:"culprits"`          // sorted
	Output   string          `json:"output"`            // CID of the assembled output
	// Rounds are the commitment and disclosure orders of each MacroJob
	// with a commitment, by MacroJob index; empty in a version 1 record
	// and in a body record (they are in the body).
	// The QoS ledger and the fee split read them (checkRounds).
	Rounds []RoundOrder `json:"rounds,omitempty"`
	// Body is the CID of the VerdictBody document of a record too large
	// to hold its verdict inline; empty in an inline record.
	Body string `json:"body,omitempty"`
	// BodySHA256 is the lowercase hex SHA-256 of the Body document.
	BodySHA256 string `json:"body_sha256,omitempty"`
}

// Dispute asks Third to re-run the disputed block.
type Dispute struct {
	Dispute microjob.Dispute `json:"dispute"`
	Third   string           `json:"third"`
	// Dropped are earlier thirds that did not re-run the block within
	// Config.RerunTimeout; they are not drawn again.
	Dropped []string `json:"dropped,omitempty"`
}

// Rerun is a third processor's output hash of a disputed block.
type Rerun struct {
	Block     uint64 `json:"block"`
	Hash      string `json:"hash"` // lowercase hex SHA-256
	Processor string `json:"processor"`
}

// Redo asks for MicroJob to be run again by anyone not in Exclude.
type Redo struct {
	Micro   string   `json:"micro"`
	Exclude []string `json:"exclude"`
}

// decodeStrict decodes one record payload: size-limited, no unknown
// fields, nothing trailing.
func decodeStrict(b []byte, v any) error {
	if err := strictjson.Decode(b, MaxRecord, v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	return nil
}

// DecodeVerdictRecord decodes an inline verdict record and its verdict,
// and checks its rounds (size-limited to MaxRecord like every flow
// record). A record whose verdict is in a body is refused with
// ErrBodyNotFetched: LoadVerdictRecord fetches it.
func DecodeVerdictRecord(b []byte) (VerdictRecord, microjob.Verdict, error) {
	var r VerdictRecord
	if err := decodeStrict(b, &r); err != nil {
		return r, microjob.Verdict{}, err
	}
	c, err := checkBodyRef(r)
	if err != nil {
		return r, microjob.Verdict{}, err
	}
	if c.Defined() {
		return r, microjob.Verdict{}, fmt.Errorf("%w: %w: verdict is in body %s", ErrBadRecord, ErrBodyNotFetched, c)
	}
	return decodeInline(r)
}

// decodeInline decodes and checks the verdict and rounds of an inline
// record.
func decodeInline(r VerdictRecord) (VerdictRecord, microjob.Verdict, error) {
	v, err := microjob.DecodeVerdict(r.Verdict)
	if err != nil {
		return r, v, fmt.Errorf("%w: %w", ErrBadRecord, err)
	}
	if err := checkRounds(r.Rounds, v); err != nil {
		return r, v, err
	}
	return r, v, nil
}

// AuthorPolicy is the store's author rule for the processing flow: result
// records are written only by the processor they name (microjob);
// verdicts, disputes, re-runs, checks, redos, settlement signatures and
// holder records only by the peer their key ends with; processor
// advertisements only by their peer.
func AuthorPolicy(nodesPrefix string) crdt.AuthorPolicy {
	owner := crdt.OwnerPolicy(nodesPrefix)
	return func(key string, author peer.ID) error {
		if err := owner(key, author); err != nil {
			return err
		}
		if err := microjob.AuthorPolicy(key, author); err != nil {
			return err
		}
		if a, ok := keyAuthor(key); ok && a != author.String() {
			return fmt.Errorf("%q (verdict, dispute, re-run, check or redo) written by %s", key, author)
		}
		if i := strings.Index(key, "/signature/"); i >= 0 && strings.HasPrefix(key, "/jobs/") {
			if key[i+len("/signature/"):] != author.String() {
				return fmt.Errorf("settlement signature %q written by %s", key, author)
			}
		}
		if err := holderPolicy(key, author); err != nil {
			return err
		}
		return nil
	}
}
