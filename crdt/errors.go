package crdt

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrNotFound: no record is stored under the key (or it was deleted).
	ErrNotFound = errors.New("crdt: record not found")
	// ErrRejected: a record is stored under the key but failed
	// verification; the error also wraps one of the reason errors below.
	ErrRejected = errors.New("crdt: record rejected")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("crdt: store closed")
	// ErrInvalidKey: the key is not a clean, absolute datastore key.
	ErrInvalidKey = errors.New("crdt: invalid key")
	// ErrInvalidType: the record type is empty, too long or uses
	// characters outside [a-z0-9._-].
	ErrInvalidType = errors.New("crdt: invalid record type")
	// ErrWrongType: a record exists but is not of the type asked for.
	ErrWrongType = errors.New("crdt: wrong record type")
	// ErrInvalidConfig: a Config field is out of range or missing.
	ErrInvalidConfig = errors.New("crdt: invalid config")

	// Reasons for rejecting a record; each has a metric label (see Reason).

	// ErrMalformed: the envelope cannot be parsed.
	ErrMalformed = errors.New("crdt: malformed envelope")
	// ErrUnknownVersion: the envelope's version byte is not one this
	// build understands.
	ErrUnknownVersion = errors.New("crdt: unknown envelope version")
	// ErrOversized: the payload (or the whole envelope) exceeds the limit.
	ErrOversized = errors.New("crdt: payload too large")
	// ErrKeyMismatch: the envelope was signed for another key than the
	// one it is stored under (a replay).
	ErrKeyMismatch = errors.New("crdt: envelope key does not match storage key")
	// ErrBadAuthor: the author's public key does not belong to its peer ID.
	ErrBadAuthor = errors.New("crdt: author public key does not match peer ID")
	// ErrBadSignature: the signature does not verify.
	ErrBadSignature = errors.New("crdt: bad signature")
	// ErrPolicy: the author may not write this key (Config.AuthorPolicy).
	ErrPolicy = errors.New("crdt: author not allowed for key")
)

// reasons maps each rejection reason to its metric label, in check order.
var reasons = []struct {
	err   error
	label string
}{
	{ErrUnknownVersion, "unknown_version"},
	{ErrMalformed, "malformed"},
	{ErrOversized, "oversized"},
	{ErrKeyMismatch, "key_mismatch"},
	{ErrBadAuthor, "bad_author"},
	{ErrBadSignature, "bad_signature"},
	{ErrPolicy, "policy"},
	{ErrCarriage, "carriage"},
}

// Reason returns the metric label of a rejection error ("bad_signature",
// "policy", ...), or "" if err is not a rejection.
func Reason(err error) string {
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.label
		}
	}
	return ""
}

// RejectError reports a stored record that failed verification. It matches
// both ErrRejected and the reason error (for example ErrBadSignature).
type RejectError struct {
	Key    string // storage key of the record
	Reason error  // one of the reason errors, possibly wrapped with detail
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("crdt: record %q rejected: %v", e.Key, e.Reason)
}

// Unwrap exposes both ErrRejected and the reason to errors.Is.
func (e *RejectError) Unwrap() []error { return []error{ErrRejected, e.Reason} }
