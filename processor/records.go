package processor

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/microjob"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// MaxRecord bounds the payload of the flow's own records.
const MaxRecord = 256 << 10

// ErrBadRecord is wrapped by decoding errors of the flow's records.
var ErrBadRecord = errors.New("processor: bad record")

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
