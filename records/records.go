package records

import (
	"errors"
	"fmt"
	"slices"

	"github.com/jobmesh/jobmesh/microjob"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// MaxRecord bounds the payload of the records decoded here, unless a
// record has a limit of its own.
const MaxRecord = 256 << 10

// ErrBadRecord is wrapped by every decoding error of a record.
var ErrBadRecord = errors.New("records: bad record")

// Dispute asks Third to re-run the disputed block.
type Dispute struct {
	Dispute microjob.Dispute `json:"dispute"`
	Third   string           `json:"third"`
	// Dropped are earlier thirds that did not re-run the block within the
	// processors' re-run timeout; they are not drawn again.
	Dropped []string `json:"dropped,omitempty"`
	// More are the re-runners drawn after Third as the dispute escalated
	// (package finish, escalate.go), and Exhausted says none was left.
	More      []string `json:"more,omitempty"`
	Exhausted bool     `json:"exhausted,omitempty"`
}

// Rerun is a re-runner's output hash of a disputed or self-checked
// block.
type Rerun struct {
	Block     uint64 `json:"block"`
	Hash      string `json:"hash"` // lowercase hex SHA-256
	Processor string `json:"processor"`
}

// Check asks Thirds to re-run Block, which Processor alone computed for
// both the verifier and the regular MicroJob, with output hash Hash: a
// self-checked block, which proves nothing by itself because a consistent
// liar agrees with itself.
type Check struct {
	Block     uint64    `json:"block"`
	Processor string    `json:"processor"`
	Hash      string    `json:"hash"`   // lowercase hex SHA-256
	Thirds    [2]string `json:"thirds"` // distinct, neither is Processor
	// More are the re-runners drawn after Thirds as the check escalated.
	More []string `json:"more,omitempty"`
	// Dropped are earlier re-runners that did not answer within the
	// processors' re-run timeout; they are not drawn again.
	Dropped []string `json:"dropped,omitempty"`
	// Exhausted: no processor is left to replace a silent re-runner; the
	// re-runs that came in decide alone, and only to confirm the hash.
	Exhausted bool `json:"exhausted,omitempty"`
}

// Valid reports whether a dispute's content keeps the rules: a third that
// is neither side nor dropped.
func (d Dispute) Valid() bool {
	return d.Third != "" && d.Third != d.Dispute.Processors[0] && d.Third != d.Dispute.Processors[1] &&
		!slices.Contains(d.Dropped, d.Third)
}

// Valid reports whether a check's content keeps the rules: two distinct
// re-runners, neither of them the checked processor.
func (c Check) Valid() bool {
	return c.Processor != "" && c.Thirds[0] != "" && c.Thirds[1] != "" && c.Thirds[0] != c.Thirds[1] &&
		c.Thirds[0] != c.Processor && c.Thirds[1] != c.Processor
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

// decode decodes one record payload into a T (decodeStrict).
func decode[T any](b []byte) (T, error) {
	var v T
	err := decodeStrict(b, &v)
	return v, err
}

// DecodeDispute decodes a dispute record (size limit MaxRecord, no
// unknown fields). Whether its key and author fit it is the reader's
// check.
func DecodeDispute(b []byte) (Dispute, error) { return decode[Dispute](b) }

// DecodeCheck decodes a check record, as DecodeDispute.
func DecodeCheck(b []byte) (Check, error) { return decode[Check](b) }

// DecodeRedo decodes a redo record, as DecodeDispute.
func DecodeRedo(b []byte) (Redo, error) { return decode[Redo](b) }

// DecodeRerun decodes a re-run record, as DecodeDispute.
func DecodeRerun(b []byte) (Rerun, error) { return decode[Rerun](b) }
