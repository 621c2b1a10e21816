package crdt

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// seededKey returns a deterministic Ed25519 libp2p key, so that encodings
// in these tests (and in the protocol doc) are reproducible.
func seededKey(t testing.TB, seed byte) (crypto.PrivKey, peer.ID) {
	t.Helper()
	priv, err := crypto.UnmarshalEd25519PrivateKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return priv, id
}

func sealed(t testing.TB, r Record, priv crypto.PrivKey) []byte {
	t.Helper()
	b, err := sealRecord(r, priv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEnvelopeRoundTrip(t *testing.T) {
	priv, id := seededKey(t, 1)
	in := Record{Key: "/jobs/abc", Type: "job", Author: id, Seq: 1234567890, Payload: []byte(`{"price":1}`)}
	data := sealed(t, in, priv)
	again := sealed(t, in, priv)
	if !bytes.Equal(data, again) {
		t.Fatal("encoding is not deterministic")
	}
	got, err := openRecord("/jobs/abc", data, 1024, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != in.Key || got.Type != in.Type || got.Author != in.Author || got.Seq != in.Seq ||
		!bytes.Equal(got.Payload, in.Payload) || got.Tombstone {
		t.Fatalf("round trip: got %+v, want %+v", got, in)
	}
	tomb := sealed(t, Record{Key: "/jobs/abc", Author: id, Seq: 2, Tombstone: true}, priv)
	got, err = openRecord("/jobs/abc", tomb, 1024, nil, nil)
	if err != nil || !got.Tombstone {
		t.Fatalf("tombstone: %+v, %v", got, err)
	}
}

// TestEnvelopeGolden pins the version 1 encoding; the same vector is in the
// protocol document.
func TestEnvelopeGolden(t *testing.T) {
	priv, id := seededKey(t, 7)
	data := sealed(t, Record{Key: "/nodes/x", Type: "node", Author: id, Seq: 300, Payload: []byte("hi")}, priv)
	const want = "" +
		"0100" + // version 1, flags 0
		"082f6e6f6465732f78" + // key "/nodes/x"
		"046e6f6465" + // type "node"
		"26" + "002408011220ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c" + // author peer ID, 38 bytes
		"ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c" + // public key
		"ac02" + // seq 300
		"026869" + // payload "hi"
		"049218b9b9ea0d4899a3e8debd429272fe148fcb5589f04b8b63553d2fdca3ee" + // signature (Ed25519 is deterministic)
		"2d2622b4fb8e2f413d5a4c7311ed8db3ef6d98c49b023600098b2a5e3d019a03"
	if got := hex.EncodeToString(data); got != want {
		t.Fatalf("encoding changed:\n got %s\nwant %s", got, want)
	}
	if _, err := openRecord("/nodes/x", data, 1024, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestEnvelopeRejects(t *testing.T) {
	priv, id := seededKey(t, 1)
	_, other := seededKey(t, 2)
	good := Record{Key: "/nodes/" + id.String(), Type: "node", Author: id, Seq: 9, Payload: []byte("payload")}
	valid := sealed(t, good, priv)
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), valid...))
	}
	cases := []struct {
		name   string
		key    string
		data   []byte
		policy AuthorPolicy
		want   error
	}{
		{"flipped signature", good.Key, mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), nil, ErrBadSignature},
		{"flipped payload", good.Key, mutate(func(b []byte) []byte { b[len(b)-sigLen-1] ^= 1; return b }), nil, ErrBadSignature},
		{"unknown version", good.Key, mutate(func(b []byte) []byte { b[0] = 3; return b }), nil, ErrUnknownVersion},
		{"unknown flag", good.Key, mutate(func(b []byte) []byte { b[1] = 2; return b }), nil, ErrMalformed},
		{"trailing byte", good.Key, mutate(func(b []byte) []byte { return append(b, 0) }), nil, ErrMalformed},
		{"truncated", good.Key, mutate(func(b []byte) []byte { return b[:len(b)-1] }), nil, ErrMalformed},
		{"empty", good.Key, nil, nil, ErrMalformed},
		{"replayed under another key", "/nodes/other", valid, nil, ErrKeyMismatch},
		{"author is not the signer", good.Key,
			sealed(t, Record{Key: good.Key, Type: "node", Author: other, Seq: 1}, priv), nil, ErrBadAuthor},
		{"oversized payload", good.Key,
			sealed(t, Record{Key: good.Key, Type: "node", Author: id, Seq: 1, Payload: make([]byte, 1025)}, priv), nil, ErrOversized},
		{"oversized envelope", good.Key, append([]byte{envelopeVersion}, make([]byte, 1024+envelopeOverhead)...), nil, ErrOversized},
		{"oversized batch envelope", good.Key, append([]byte{batchEnvelopeVersion}, make([]byte, 1024+envelopeOverhead+batchOverhead)...), nil, ErrOversized},
		{"bad type", good.Key, sealed(t, Record{Key: good.Key, Type: "Node!", Author: id, Seq: 1}, priv), nil, ErrMalformed},
		{"unclean key", "/a//b", sealed(t, Record{Key: "/a//b", Type: "node", Author: id, Seq: 1}, priv), nil, ErrMalformed},
		{"tombstone with payload", good.Key,
			sealed(t, Record{Key: good.Key, Author: id, Seq: 1, Payload: []byte("x"), Tombstone: true}, priv), nil, ErrMalformed},
		{"non-minimal varint", good.Key, mutate(func(b []byte) []byte {
			// Rewrite the one-byte key length as two bytes.
			return append([]byte{b[0], b[1], b[2] | 0x80, 0x00}, b[3:]...)
		}), nil, ErrMalformed},
		{"policy", good.Key, valid, OwnerPolicy("/nodes"), nil},
		{"policy refuses other author", "/nodes/" + other.String(),
			sealed(t, Record{Key: "/nodes/" + other.String(), Type: "node", Author: id, Seq: 1}, priv), OwnerPolicy("/nodes"), ErrPolicy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := openRecord(c.key, c.data, 1024, c.policy, nil)
			if c.want == nil {
				if err != nil {
					t.Fatalf("unexpected rejection: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if Reason(err) == "" {
				t.Fatalf("no metric label for %v", err)
			}
		})
	}
}

func TestOwnerPolicy(t *testing.T) {
	_, a := seededKey(t, 1)
	_, b := seededKey(t, 2)
	p := OwnerPolicy("/nodes/", "/keys")
	for _, c := range []struct {
		key    string
		author peer.ID
		ok     bool
	}{
		{"/nodes/" + a.String(), a, true},
		{"/nodes/" + a.String() + "/models", a, true},
		{"/nodes/" + a.String(), b, false},
		{"/nodes/" + a.String() + "/models", b, false},
		{"/keys/" + b.String(), b, true},
		{"/keys/" + b.String(), a, false},
		{"/jobs/1", b, true},
		{"/nodesx/" + a.String(), b, true},
	} {
		if err := p(c.key, c.author); (err == nil) != c.ok {
			t.Errorf("policy(%q, %s) = %v, want ok=%v", c.key, c.author, err, c.ok)
		}
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	priv, id := seededKey(f, 3)
	for _, r := range []Record{
		{Key: "/jobs/1", Type: "job", Author: id, Seq: 1, Payload: []byte("{}")},
		{Key: "/nodes/" + id.String(), Type: "node", Author: id, Seq: 1 << 62},
		{Key: "/jobs/1", Author: id, Seq: 5, Tombstone: true},
	} {
		f.Add(sealed(f, r, priv))
	}
	batch, err := sealBatch([]Record{
		{Key: "/jobs/1/a", Type: "commit", Author: id, Seq: 2, Payload: []byte("{}")},
		{Key: "/jobs/1/b", Author: id, Seq: 3, Tombstone: true},
	}, priv)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range batch {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	const maxPayload = 512
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEnvelope(data, maxPayload)
		if err != nil {
			if Reason(err) == "" {
				t.Fatalf("error without reason: %v", err)
			}
			return
		}
		if len(e.Payload) > maxPayload || len(e.Key) > MaxKeyLen || len(e.Type) > MaxTypeLen {
			t.Fatalf("limits not enforced: %d/%d/%d", len(e.Payload), len(e.Key), len(e.Type))
		}
		// One record, one encoding: re-encoding what was decoded gives
		// back the input exactly.
		re := e.encode()
		if !bytes.Equal(re, data) {
			t.Fatalf("non-canonical input accepted:\n in %x\nout %x", data, re)
		}
		if err := e.verify(e.Key, nil, nil); err != nil && Reason(err) == "" {
			t.Fatalf("verify error without reason: %v", err)
		}
	})
}

// The protocol document states this bound; keep them in step.
func TestEnvelopeOverheadIsDocumented(t *testing.T) {
	if envelopeOverhead != 1300 {
		t.Fatalf("envelopeOverhead = %d; update PROTOCOL.md", envelopeOverhead)
	}
}

// BenchmarkOpenRecord is the cost of verifying one record on read.
//
//	go test ./crdt -run '^$' -bench OpenRecord -benchtime 2s
func BenchmarkOpenRecord(b *testing.B) {
	priv, id := seededKey(b, 1)
	for _, size := range []int{256, 16 << 10} {
		data := sealed(b, Record{Key: "/jobs/abc", Type: "job", Author: id, Seq: 1, Payload: make([]byte, size)}, priv)
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := openRecord("/jobs/abc", data, 256<<10, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenBatch is the cost of verifying the records of one batch
// as a replica does (one signature check, then a hash per record) against
// the same records signed one by one, in the same run:
//
//	go test ./crdt -run '^$' -bench OpenBatch -benchtime 2s
func BenchmarkOpenBatch(b *testing.B) {
	priv, id := seededKey(b, 1)
	var rs []Record
	for i := range 4 {
		rs = append(rs, Record{Key: fmt.Sprintf("/jobs/abc/%d", i), Type: "commit", Author: id, Seq: uint64(i + 1), Payload: make([]byte, 256)})
	}
	batch, err := sealBatch(rs, priv)
	if err != nil {
		b.Fatal(err)
	}
	single := make([][]byte, len(rs))
	for i, r := range rs {
		single[i] = sealed(b, r, priv)
	}
	for _, c := range []struct {
		name string
		data [][]byte
	}{{"records=4/signed-alone", single}, {"records=4/signed-as-batch", batch}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				sigs := newSigCache(16) // a fresh replica's view of the batch
				for i, r := range rs {
					if _, err := openRecord(r.Key, c.data[i], 256<<10, nil, sigs); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
