package crdt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-datastore"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/internal/peertext"
)

// Envelope layout, version 1 (docs/PROTOCOL.md has the byte-by-byte table):
//
//	u8      version (1)
//	u8      flags (bit 0: tombstone; other bits must be 0)
//	uvarint len, key bytes
//	uvarint len, record type bytes
//	uvarint len, author peer ID bytes
//	[32]    author Ed25519 public key
//	uvarint seq
//	uvarint len, payload bytes
//	[64]    Ed25519 signature over signDomain || all bytes above
//
// Every uvarint must be minimally encoded and nothing may follow the
// signature, so that one record has exactly one encoding.
//
// Version 2 is a record of a batch (Store.PutBatch) signed once for the
// whole batch: version byte 2, the same fields up to the payload, then
//
//	uvarint n       records in the batch, 2..MaxBatchRecords
//	uvarint index   this record's place, below n
//	[n × 32]        leaf hashes: SHA-256(leafDomain || fields 1–8) of each record
//	[64]            Ed25519 signature over batchSignDomain || uvarint n || the leaves
//
// A reader checks that its record's own leaf is at index and that the
// signature holds; replicas check each batch's signature once (sigCache),
// not once per record.
const (
	envelopeVersion      = 1
	batchEnvelopeVersion = 2

	// MaxBatchRecords is the most records one batch signature covers;
	// Store.PutBatch signs larger batches in groups of at most this many.
	MaxBatchRecords = 64
	leafLen         = sha256.Size
	// batchOverhead is what version 2 adds to an envelope at most.
	batchOverhead = 2*binary.MaxVarintLen64 + MaxBatchRecords*leafLen

	flagTombstone = 1 << 0

	// MaxKeyLen is the longest key a record may be stored under.
	MaxKeyLen = 1024
	// MaxTypeLen is the longest record type.
	MaxTypeLen = 64
	// maxAuthorLen bounds the peer ID field; an Ed25519 peer ID is 38 bytes.
	maxAuthorLen = 64

	pubKeyLen = ed25519.PublicKeySize
	sigLen    = ed25519.SignatureSize

	// envelopeOverhead bounds everything but the payload: two bytes of
	// header, four length-prefixed fields, the seq, key and signature.
	envelopeOverhead = 2 + 4*binary.MaxVarintLen64 + MaxKeyLen + MaxTypeLen + maxAuthorLen +
		pubKeyLen + binary.MaxVarintLen64 + sigLen
)

// signDomain separates record signatures from any other signature made with
// the same libp2p key.
const signDomain = "jobmesh/crdt/record/v1\x00"

// leafDomain and batchSignDomain separate a batch's leaf hashes and its
// signature from record signatures and from each other.
const (
	leafDomain      = "jobmesh/crdt/leaf/v2\x00"
	batchSignDomain = "jobmesh/crdt/batch/v2\x00"
)

// Record is a verified record as read from the store.
type Record struct {
	Key       string  // key it was written under (always equal to the storage key)
	Type      string  // record type, e.g. "node", "job"
	Author    peer.ID // peer that signed it
	Seq       uint64  // author-chosen: Unix nanoseconds of the write, strictly increasing per open Store
	Payload   []byte  // opaque payload; empty for tombstones
	Tombstone bool    // true for a signed deletion
}

// AuthorText returns Author's canonical text (Author.String(), without
// its base58 encoding each time: peertext).
func (r Record) AuthorText() string { return peertext.Of(r.Author) }

// Time returns the author's write time carried in Seq.
func (r Record) Time() time.Time { return time.Unix(0, int64(r.Seq)) }

// envelope is a decoded, not yet verified record.
type envelope struct {
	Record
	pubKey    []byte
	sig       []byte
	signedLen int // bytes of fields 1–8: what the signature (v1) or the leaf hash (v2) covers
	raw       []byte
	// Version 2 only: the batch's leaf hashes (n × 32 bytes) and this
	// record's index among them.
	leaves []byte
	index  int
}

// batched reports whether e is a version 2 (batch-signed) record.
func (e *envelope) batched() bool { return e.leaves != nil }

// validKey reports whether key is a clean absolute datastore key of at most
// MaxKeyLen bytes; only such keys survive go-ds-crdt unchanged.
func validKey(key string) error {
	if len(key) < 2 || len(key) > MaxKeyLen || key[0] != '/' {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	if datastore.NewKey(key).String() != key {
		return fmt.Errorf("%w: %q is not clean", ErrInvalidKey, key)
	}
	return nil
}

// validType reports whether typ is 1..MaxTypeLen of [a-z0-9._-].
func validType(typ string) error {
	if len(typ) == 0 || len(typ) > MaxTypeLen {
		return fmt.Errorf("%w: %q", ErrInvalidType, typ)
	}
	for i := 0; i < len(typ); i++ {
		c := typ[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: %q", ErrInvalidType, typ)
		}
	}
	return nil
}

func appendBytes(b, field []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(field)))
	return append(b, field...)
}

// encodeUnsigned returns the signed part of a version 1 envelope.
func encodeUnsigned(r Record, pubKey []byte) []byte {
	return encodeFields(r, pubKey, envelopeVersion, 0)
}

// encodeFields returns fields 1–8 of an envelope of the given version,
// with room for extra more bytes.
func encodeFields(r Record, pubKey []byte, version byte, extra int) []byte {
	n := 2 + len(r.Key) + len(r.Type) + len(r.Author) + pubKeyLen + len(r.Payload) + 5*binary.MaxVarintLen64 + sigLen + extra
	b := make([]byte, 0, n)
	var flags byte
	if r.Tombstone {
		flags |= flagTombstone
	}
	b = append(b, version, flags)
	b = appendBytes(b, []byte(r.Key))
	b = appendBytes(b, []byte(r.Type))
	b = appendBytes(b, []byte(r.Author))
	b = append(b, pubKey...)
	b = binary.AppendUvarint(b, r.Seq)
	b = appendBytes(b, r.Payload)
	return b
}

func signedMessage(unsigned []byte) []byte {
	msg := make([]byte, 0, len(signDomain)+len(unsigned))
	msg = append(msg, signDomain...)
	return append(msg, unsigned...)
}

// sealRecord encodes r and signs it with priv, an Ed25519 key. It does not
// check limits; callers do.
func sealRecord(r Record, priv crypto.PrivKey) ([]byte, error) {
	pub, err := priv.GetPublic().Raw()
	if err != nil {
		return nil, err
	}
	if len(pub) != pubKeyLen {
		return nil, fmt.Errorf("%w: key is not Ed25519", ErrInvalidConfig)
	}
	unsigned := encodeUnsigned(r, pub)
	sig, err := priv.Sign(signedMessage(unsigned))
	if err != nil {
		return nil, fmt.Errorf("crdt: signing record: %w", err)
	}
	return append(unsigned, sig...), nil
}

// leafHash is a version 2 record's leaf: the hash of its fields 1–8.
func leafHash(fields []byte) [leafLen]byte {
	h := sha256.New()
	h.Write([]byte(leafDomain))
	h.Write(fields)
	var out [leafLen]byte
	h.Sum(out[:0])
	return out
}

// batchMessage is what a batch's signature covers.
func batchMessage(leaves []byte) []byte {
	msg := make([]byte, 0, len(batchSignDomain)+binary.MaxVarintLen64+len(leaves))
	msg = append(msg, batchSignDomain...)
	msg = binary.AppendUvarint(msg, uint64(len(leaves)/leafLen))
	return append(msg, leaves...)
}

// sealBatch encodes rs as version 2 records signed once with priv. It
// does not check limits; callers do. len(rs) must be 2..MaxBatchRecords.
func sealBatch(rs []Record, priv crypto.PrivKey) ([][]byte, error) {
	if len(rs) < 2 || len(rs) > MaxBatchRecords {
		return nil, fmt.Errorf("crdt: a signed batch holds 2 to %d records, not %d", MaxBatchRecords, len(rs))
	}
	pub, err := priv.GetPublic().Raw()
	if err != nil {
		return nil, err
	}
	if len(pub) != pubKeyLen {
		return nil, fmt.Errorf("%w: key is not Ed25519", ErrInvalidConfig)
	}
	extra := 2*binary.MaxVarintLen64 + len(rs)*leafLen
	fields := make([][]byte, len(rs))
	leaves := make([]byte, 0, len(rs)*leafLen)
	for i, r := range rs {
		fields[i] = encodeFields(r, pub, batchEnvelopeVersion, extra)
		h := leafHash(fields[i])
		leaves = append(leaves, h[:]...)
	}
	sig, err := priv.Sign(batchMessage(leaves))
	if err != nil {
		return nil, fmt.Errorf("crdt: signing a batch: %w", err)
	}
	out := make([][]byte, len(rs))
	for i, b := range fields {
		b = binary.AppendUvarint(b, uint64(len(rs)))
		b = binary.AppendUvarint(b, uint64(i))
		b = append(b, leaves...)
		out[i] = append(b, sig...)
	}
	return out, nil
}

// encode returns e's canonical encoding (decodeEnvelope's input, when it
// accepted one).
func (e *envelope) encode() []byte {
	if !e.batched() {
		return append(encodeUnsigned(e.Record, e.pubKey), e.sig...)
	}
	b := encodeFields(e.Record, e.pubKey, batchEnvelopeVersion, 0)
	b = binary.AppendUvarint(b, uint64(len(e.leaves)/leafLen))
	b = binary.AppendUvarint(b, uint64(e.index))
	b = append(b, e.leaves...)
	return append(b, e.sig...)
}

// decoder reads fields from an envelope, failing with ErrMalformed.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at offset %d", ErrMalformed, d.off)
	}
	if n != uvarintLen(v) {
		return 0, fmt.Errorf("%w: non-minimal varint at offset %d", ErrMalformed, d.off)
	}
	d.off += n
	return v, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func (d *decoder) fixed(n int) ([]byte, error) {
	if len(d.b)-d.off < n {
		return nil, fmt.Errorf("%w: truncated at offset %d", ErrMalformed, d.off)
	}
	f := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return f, nil
}

// field reads a length-prefixed field of at most limit bytes; tooBig is the
// error for a longer one.
func (d *decoder) field(limit int, tooBig error) ([]byte, error) {
	start := d.off
	n, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("%w: field at offset %d is %d bytes, limit %d", tooBig, start, n, limit)
	}
	return d.fixed(int(n))
}

// decodeEnvelope parses data without verifying it. maxPayload bounds the
// payload; the whole input is bounded by maxPayload plus the fixed overhead
// before any parsing.
func decodeEnvelope(data []byte, maxPayload int) (*envelope, error) {
	flags, err := checkEnvelopeHeader(data, maxPayload)
	if err != nil {
		return nil, err
	}
	d := &decoder{b: data, off: 2}
	key, err := d.field(MaxKeyLen, ErrMalformed)
	if err != nil {
		return nil, err
	}
	typ, err := d.field(MaxTypeLen, ErrMalformed)
	if err != nil {
		return nil, err
	}
	author, err := d.field(maxAuthorLen, ErrMalformed)
	if err != nil {
		return nil, err
	}
	pub, err := d.fixed(pubKeyLen)
	if err != nil {
		return nil, err
	}
	seq, err := d.uvarint()
	if err != nil {
		return nil, err
	}
	payload, err := d.field(maxPayload, ErrOversized)
	if err != nil {
		return nil, err
	}
	signedLen := d.off
	var leaves []byte
	index := 0
	if data[0] == batchEnvelopeVersion {
		if leaves, index, err = d.batchLeaves(); err != nil {
			return nil, err
		}
	}
	sig, err := d.fixed(sigLen)
	if err != nil {
		return nil, err
	}
	if d.off != len(data) {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(data)-d.off)
	}
	e := &envelope{
		Record: Record{
			Key:       string(key),
			Type:      string(typ),
			Author:    peer.ID(author),
			Seq:       seq,
			Tombstone: flags&flagTombstone != 0,
		},
		pubKey:    pub,
		sig:       sig,
		signedLen: signedLen,
		raw:       data,
		leaves:    leaves,
		index:     index,
	}
	if len(payload) > 0 {
		e.Payload = append([]byte(nil), payload...)
	}
	if err := e.checkKeyAndType(); err != nil {
		return nil, err
	}
	return e, nil
}

// checkEnvelopeHeader bounds data's size for its version, before any
// parsing, and returns its flags.
func checkEnvelopeHeader(data []byte, maxPayload int) (flags byte, err error) {
	if len(data) > maxPayload+envelopeOverhead+batchOverhead {
		return 0, fmt.Errorf("%w: envelope is %d bytes", ErrOversized, len(data))
	}
	if len(data) < 2 {
		return 0, fmt.Errorf("%w: %d bytes", ErrMalformed, len(data))
	}
	if data[0] != envelopeVersion && data[0] != batchEnvelopeVersion {
		return 0, fmt.Errorf("%w: %d", ErrUnknownVersion, data[0])
	}
	if data[0] == envelopeVersion && len(data) > maxPayload+envelopeOverhead {
		return 0, fmt.Errorf("%w: envelope is %d bytes", ErrOversized, len(data))
	}
	flags = data[1]
	if flags&^flagTombstone != 0 {
		return 0, fmt.Errorf("%w: unknown flags %#x", ErrMalformed, flags)
	}
	return flags, nil
}

// batchLeaves reads a batch envelope's record count, its record's index and
// the batch's leaf hashes.
func (d *decoder) batchLeaves() (leaves []byte, index int, err error) {
	n, err := d.uvarint()
	if err != nil {
		return nil, 0, err
	}
	if n < 2 || n > MaxBatchRecords {
		return nil, 0, fmt.Errorf("%w: a batch of %d records", ErrMalformed, n)
	}
	i, err := d.uvarint()
	if err != nil {
		return nil, 0, err
	}
	if i >= n {
		return nil, 0, fmt.Errorf("%w: record %d of a batch of %d", ErrMalformed, i, n)
	}
	if leaves, err = d.fixed(int(n) * leafLen); err != nil {
		return nil, 0, err
	}
	return leaves, int(i), nil
}

// checkKeyAndType checks a decoded record's key and type; a tombstone has no
// payload and may have no type.
func (e *envelope) checkKeyAndType() error {
	if err := validKey(e.Key); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if e.Tombstone {
		if len(e.Payload) != 0 {
			return fmt.Errorf("%w: tombstone with payload", ErrMalformed)
		}
		if len(e.Type) != 0 {
			if err := validType(e.Type); err != nil {
				return fmt.Errorf("%w: %w", ErrMalformed, err)
			}
		}
	} else if err := validType(e.Type); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}

// AuthorPolicy decides whether author may write key. It runs on every read
// (and on local writes, to refuse early); a non-nil error rejects the record.
type AuthorPolicy func(key string, author peer.ID) error

// verify checks that e was stored under storageKey, that its public key is
// the author's, that the signature holds and that policy allows the author.
// A batch signature found in sigs (when not nil) is not checked again, and
// one that holds is added to it.
func (e *envelope) verify(storageKey string, policy AuthorPolicy, sigs *sigCache) error {
	if e.Key != storageKey {
		return fmt.Errorf("%w: signed for %q", ErrKeyMismatch, e.Key)
	}
	pk, err := crypto.UnmarshalEd25519PublicKey(e.pubKey)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadAuthor, err)
	}
	if !e.Author.MatchesPublicKey(pk) {
		return fmt.Errorf("%w: %s", ErrBadAuthor, e.Author)
	}
	if err := e.checkSignature(sigs); err != nil {
		return err
	}
	if policy != nil {
		if err := policy(e.Key, e.Author); err != nil {
			return fmt.Errorf("%w: %w", ErrPolicy, err)
		}
	}
	return nil
}

// checkSignature checks a version 1 record's signature, or a version 2
// record's leaf and its batch's signature.
func (e *envelope) checkSignature(sigs *sigCache) error {
	if !e.batched() {
		if !ed25519.Verify(ed25519.PublicKey(e.pubKey), signedMessage(e.raw[:e.signedLen]), e.sig) {
			return ErrBadSignature
		}
		return nil
	}
	leaf := leafHash(e.raw[:e.signedLen])
	if !bytes.Equal(leaf[:], e.leaves[e.index*leafLen:(e.index+1)*leafLen]) {
		return fmt.Errorf("%w: the record is not the batch's record %d", ErrBadSignature, e.index)
	}
	id := batchID(e.pubKey, e.leaves, e.sig)
	if sigs.has(id) {
		return nil
	}
	if !ed25519.Verify(ed25519.PublicKey(e.pubKey), batchMessage(e.leaves), e.sig) {
		return ErrBadSignature
	}
	sigs.add(id)
	return nil
}

// batchID identifies a checked batch signature: the key, the leaves and
// the signature together.
func batchID(pubKey, leaves, sig []byte) [32]byte {
	h := sha256.New()
	h.Write(pubKey)
	h.Write(sig)
	h.Write(leaves)
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// sigCache remembers batch signatures that held, so that the other
// records of a batch cost a hash each. A nil *sigCache remembers nothing.
type sigCache struct {
	mu    sync.Mutex
	seen  map[[32]byte]struct{}
	limit int
}

func newSigCache(limit int) *sigCache {
	return &sigCache{seen: map[[32]byte]struct{}{}, limit: limit}
}

func (c *sigCache) has(id [32]byte) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.seen[id]
	return ok
}

func (c *sigCache) add(id [32]byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	remember(c.seen, id, c.limit)
}

// openRecord decodes and verifies data stored under key; sigs may be nil.
func openRecord(key string, data []byte, maxPayload int, policy AuthorPolicy, sigs *sigCache) (Record, error) {
	e, err := decodeEnvelope(data, maxPayload)
	if err != nil {
		return Record{}, err
	}
	if err := e.verify(key, policy, sigs); err != nil {
		return Record{}, err
	}
	return e.Record, nil
}

// OwnerPolicy returns an AuthorPolicy under which a key
// "<prefix>/<peerID>" or "<prefix>/<peerID>/..." may only be written by that
// peer, for each given prefix (e.g. "/nodes"). Keys outside the prefixes are
// open to every author.
func OwnerPolicy(prefixes ...string) AuthorPolicy {
	clean := make([]string, len(prefixes))
	for i, p := range prefixes {
		clean[i] = strings.TrimSuffix(datastore.NewKey(p).String(), "/") + "/"
	}
	return func(key string, author peer.ID) error {
		for _, p := range clean {
			rest, ok := strings.CutPrefix(key, p)
			if !ok {
				continue
			}
			owner, _, _ := strings.Cut(rest, "/")
			if owner != author.String() {
				return fmt.Errorf("key %q belongs to peer %q, written by %s", key, owner, author)
			}
		}
		return nil
	}
}
