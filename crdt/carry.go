package crdt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
)

// Carried records. A carrying record's payload is a set of other records'
// envelopes, exactly as their authors signed them (EncodeCarried). A
// replica that takes in a carrying record checks every envelope in it
// (its signature, the AuthorPolicy for the key it names and
// Carriage.Policy for the carrier) and keeps those that pass as if they
// had been written to this store: Get, Query and Watch return them. A
// record that is both written and carried is read at the newer of the
// two (the higher Seq). Carrying lets one write bring many authors'
// records to replicas that never held the store they were first written
// to, without trusting whoever carried them: a carrier can leave records
// out, never forge or alter one.
//
// Carried envelopes are kept under the store's namespace ("<namespace>
// /carried<key>"), beside go-ds-crdt's own keys, so deleting the
// namespace deletes them too. They are local: a replica re-derives them
// from the carrying records it merges.

// carriedVersion is the first byte of a carrying record's payload.
const carriedVersion = 1

// MaxCarried is the most envelopes one carrying record may hold.
const MaxCarried = 256

// carriedNs is where, under the store's namespace, carried envelopes are
// kept by key.
const carriedNs = "/carried"

// ErrCarriage: a carried record may not be carried by the record that
// carries it (Carriage.Policy), is a deletion, or the carrying record's
// payload is not a set of envelopes.
var ErrCarriage = errors.New("crdt: record may not be carried")

// Carriage configures which records carry others.
type Carriage struct {
	// Types are the record types whose payload is a set of envelopes
	// (EncodeCarried). Required.
	Types []string
	// Policy returns nil when the record under carrier may carry the
	// record under inner. Required.
	Policy func(carrier, inner string) error
}

func (c *Carriage) validate() error {
	if len(c.Types) == 0 || c.Policy == nil {
		return fmt.Errorf("%w: Carriage needs Types and Policy", ErrInvalidConfig)
	}
	for _, t := range c.Types {
		if err := validType(t); err != nil {
			return fmt.Errorf("%w: Carriage: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}

// EncodeCarried returns the payload of a record carrying envelopes (as
// Store.Envelope returns them): a version byte (1), uvarint n (1 to
// MaxCarried), then n length-prefixed envelopes.
func EncodeCarried(envelopes [][]byte) ([]byte, error) {
	if len(envelopes) == 0 || len(envelopes) > MaxCarried {
		return nil, fmt.Errorf("%w: %d envelopes, want 1 to %d", ErrCarriage, len(envelopes), MaxCarried)
	}
	b := []byte{carriedVersion}
	b = binary.AppendUvarint(b, uint64(len(envelopes)))
	for _, e := range envelopes {
		b = appendBytes(b, e)
	}
	return b, nil
}

// DecodeCarried splits a carrying record's payload into its envelopes,
// which it does not verify. It refuses an unknown version, a count out of
// range, a non-minimal or overlong length and trailing bytes; each
// envelope is a subslice of payload.
func DecodeCarried(payload []byte) ([][]byte, error) {
	if len(payload) == 0 || payload[0] != carriedVersion {
		return nil, fmt.Errorf("%w: unknown carried set version", ErrMalformed)
	}
	d := &decoder{b: payload, off: 1}
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n == 0 || n > MaxCarried {
		return nil, fmt.Errorf("%w: %d carried envelopes, want 1 to %d", ErrMalformed, n, MaxCarried)
	}
	out := make([][]byte, 0, n)
	for range n {
		e, err := d.field(len(payload), ErrMalformed)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if d.off != len(payload) {
		return nil, fmt.Errorf("%w: %d bytes after the carried set", ErrMalformed, len(payload)-d.off)
	}
	return out, nil
}

// carries reports whether a record of type typ carries others here.
func (s *Store) carries(typ string) bool {
	return s.cfg.Carriage != nil && slices.Contains(s.cfg.Carriage.Types, typ)
}

// carriedKey is where the envelope carried for key is kept.
func (s *Store) carriedKey(key string) datastore.Key {
	return datastore.NewKey(s.cfg.Namespace + carriedNs + key)
}

// takeCarried checks the envelopes carried by r, stored under carrier,
// and keeps each one that passes and is newer than what this replica
// reads under its key, telling the watchers. Refusals are counted and
// logged like any rejected record; they do not stop the others.
func (s *Store) takeCarried(carrier string, r Record) {
	envs, err := DecodeCarried(r.Payload)
	if err != nil {
		s.reject(recordID(carrier, r.Payload), carrier, len(r.Payload), err)
		return
	}
	for _, env := range envs {
		rec, err := s.checkCarried(carrier, env)
		if err != nil {
			continue // counted by checkCarried
		}
		if s.keepCarried(rec, env) {
			s.m.carried.Inc()
			s.dispatch(Change{Kind: ChangePut, Key: rec.Key, Record: rec})
		}
	}
}

// checkCarried verifies one envelope carried by the record under carrier.
func (s *Store) checkCarried(carrier string, env []byte) (Record, error) {
	e, err := decodeEnvelope(env, s.cfg.MaxPayload)
	if err != nil {
		s.reject(recordID(carrier, env), carrier, len(env), err)
		return Record{}, err
	}
	key := e.Key
	if err := s.cfg.Carriage.Policy(carrier, key); err != nil {
		err = fmt.Errorf("%w: %q carried by %q: %w", ErrCarriage, key, carrier, err)
		s.reject(recordID(key, env), key, len(env), err)
		return Record{}, err
	}
	rec, err := s.open(key, env)
	if err != nil {
		return Record{}, err // counted by open
	}
	if rec.Tombstone {
		err := fmt.Errorf("%w: %q: a deletion", ErrCarriage, key)
		s.reject(recordID(key, env), key, len(env), err)
		return Record{}, err
	}
	return rec, nil
}

// keepCarried stores env, the verified record rec, unless this replica
// already reads rec's key at rec's Seq or later; it reports whether it
// stored it.
func (s *Store) keepCarried(rec Record, env []byte) bool {
	s.carryMu.Lock()
	defer s.carryMu.Unlock()
	ctx := context.Background()
	if cur, _, ok := s.carriedRecord(ctx, rec.Key); ok && cur.Seq >= rec.Seq {
		return false
	}
	if cur, _, ok, err := s.written(ctx, rec.Key); err == nil && ok && cur.Seq >= rec.Seq {
		return false
	}
	if err := s.guard.Put(ctx, s.carriedKey(rec.Key), env); err != nil {
		s.log.Warn("keeping a carried record", "key", rec.Key, "err", err)
		return false
	}
	return true
}

// carriedRecord returns the verified record carried for key, if any, and
// its envelope.
func (s *Store) carriedRecord(ctx context.Context, key string) (Record, []byte, bool) {
	if s.cfg.Carriage == nil {
		return Record{}, nil, false
	}
	data, err := s.guard.Get(ctx, s.carriedKey(key))
	if err != nil {
		return Record{}, nil, false
	}
	r, err := s.open(key, data)
	return r, data, err == nil
}

// written returns the verified record written under key (a deletion
// included), if any, and its envelope; a stored record that fails
// verification is an error (a *RejectError).
func (s *Store) written(ctx context.Context, key string) (Record, []byte, bool, error) {
	data, err := s.crdt.Get(ctx, datastore.NewKey(key))
	if errors.Is(err, datastore.ErrNotFound) {
		return Record{}, nil, false, nil
	}
	if err != nil {
		return Record{}, nil, false, fmt.Errorf("crdt: reading %q: %w", key, err)
	}
	r, err := s.open(key, data)
	if err != nil {
		return Record{}, nil, false, err
	}
	return r, data, true, nil
}

// newest returns what this replica reads under key: the newer of the
// record written there and the one carried for it, with its envelope;
// ErrNotFound when there is neither, or the newer is a deletion.
func (s *Store) newest(ctx context.Context, key string) (Record, []byte, error) {
	w, wenv, hw, err := s.written(ctx, key)
	if err != nil {
		return Record{}, nil, err
	}
	c, cenv, hc := s.carriedRecord(ctx, key)
	r, ok := newer(w, hw, c, hc)
	switch {
	case !ok:
		return Record{}, nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	case r.Tombstone:
		return Record{}, nil, fmt.Errorf("%w: %q deleted", ErrNotFound, key)
	case hw && r.Seq == w.Seq:
		return r, wenv, nil
	}
	return r, cenv, nil
}

// carriedUnder returns the verified carried records under prefix whose
// key keep accepts (nil: all), in no particular order.
func (s *Store) carriedUnder(ctx context.Context, prefix string, keep func(string) bool) ([]Record, error) {
	if s.cfg.Carriage == nil {
		return nil, nil
	}
	base := datastore.NewKey(s.cfg.Namespace).String() + carriedNs
	self := cleanPrefix(prefix)
	res, err := s.guard.Query(ctx, query.Query{Prefix: base + self})
	if err != nil {
		return nil, fmt.Errorf("crdt: carried records under %q: %w", prefix, err)
	}
	defer res.Close()
	var out []Record
	for e := range res.Next() {
		if e.Error != nil {
			return nil, fmt.Errorf("crdt: carried records under %q: %w", prefix, e.Error)
		}
		k := strings.TrimPrefix(e.Key, base)
		if k == self || keep != nil && !keep(k) {
			continue
		}
		if r, err := s.open(k, e.Value); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// newer returns the newer of a written record and a carried one of the
// same key (the written one on a tie).
func newer(written Record, haveWritten bool, carried Record, haveCarried bool) (Record, bool) {
	switch {
	case haveWritten && (!haveCarried || written.Seq >= carried.Seq):
		return written, true
	case haveCarried:
		return carried, true
	}
	return Record{}, false
}

// withCarried merges carried records into written ones (tombstones
// included), keeps the newer of each key, drops deletions and orders the
// result by key.
func withCarried(written, carried []Record) []Record {
	if len(carried) > 0 {
		byKey := make(map[string]int, len(written))
		for i, r := range written {
			byKey[r.Key] = i
		}
		for _, c := range carried {
			i, ok := byKey[c.Key]
			if !ok {
				byKey[c.Key] = len(written)
				written = append(written, c)
				continue
			}
			written[i], _ = newer(written[i], true, c, true)
		}
	}
	out := written[:0]
	for _, r := range written {
		if !r.Tombstone {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Envelope returns the envelope of the record this replica reads under
// key, exactly as its author signed it: what a carrying record carries.
func (s *Store) Envelope(ctx context.Context, key string) ([]byte, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if err := validKey(key); err != nil {
		return nil, err
	}
	_, env, err := s.newest(ctx, key)
	return env, err
}
