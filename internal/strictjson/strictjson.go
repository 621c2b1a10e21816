// Package strictjson decodes the JSON records and messages of jobmesh's
// wire formats the one strict way they all share: a size limit checked
// before parsing, unknown fields refused, nothing after the value.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

var (
	// ErrTooLarge is wrapped when the input exceeds the limit.
	ErrTooLarge = errors.New("too large")
	// ErrMalformed is wrapped when the input is not one acceptable value.
	ErrMalformed = errors.New("malformed")
)

// Decode decodes exactly one JSON value of at most limit bytes into v.
func Decode(b []byte, limit int, v any) error {
	if len(b) > limit {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(b), limit)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the value", ErrMalformed)
	}
	return nil
}
