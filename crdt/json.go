package crdt

import (
	"context"
	"encoding/json"
	"fmt"
)

// PutJSON writes v, encoded as JSON, as a record of type typ under key.
func PutJSON(ctx context.Context, w Writer, key, typ string, v any) error {
	e, err := JSONEntry(key, typ, v)
	if err != nil {
		return err
	}
	return w.Put(ctx, e.Key, e.Type, e.Payload)
}

// JSONEntry is v, encoded as JSON, as a PutBatch entry of type typ under
// key.
func JSONEntry(key, typ string, v any) (Entry, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return Entry{}, fmt.Errorf("crdt: encoding %q: %w", key, err)
	}
	return Entry{Key: key, Type: typ, Payload: payload}, nil
}

// GetJSON reads the record under key, checks that it is of type typ
// (ErrWrongType otherwise) and decodes its JSON payload into a T. The record
// is returned too, for its author and sequence.
func GetJSON[T any](ctx context.Context, r Getter, key, typ string) (T, Record, error) {
	var v T
	rec, err := r.Get(ctx, key)
	if err != nil {
		return v, Record{}, err
	}
	if rec.Type != typ {
		return v, rec, fmt.Errorf("%w: %q is %q, want %q", ErrWrongType, key, rec.Type, typ)
	}
	if err := json.Unmarshal(rec.Payload, &v); err != nil {
		return v, rec, fmt.Errorf("crdt: decoding %q: %w", key, err)
	}
	return v, rec, nil
}
