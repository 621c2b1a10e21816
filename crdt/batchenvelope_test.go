package crdt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// TestBatchEnvelopeGolden pins version 2, a record of a batch signed once
// (docs/PROTOCOL.md has the same bytes).
func TestBatchEnvelopeGolden(t *testing.T) {
	priv, id := seededKey(t, 7)
	out, err := sealBatch([]Record{
		{Key: "/nodes/x", Type: "node", Author: id, Seq: 300, Payload: []byte("hi")},
		{Key: "/nodes/y", Type: "node", Author: id, Seq: 301, Payload: []byte("ho")},
	}, priv)
	if err != nil {
		t.Fatal(err)
	}
	const want = "" +
		"0200" + // version 2, flags 0
		"082f6e6f6465732f78" + // key "/nodes/x"
		"046e6f6465" + // type "node"
		"26" + "002408011220ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c" + // author peer ID
		"ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c" + // public key
		"ac02" + // seq 300
		"026869" + // payload "hi"
		"02" + "00" + // a batch of 2, this is record 0
		"8d90f8da725002c0360a0bb9e9776996827994c5a1f49c5b78b3db6e3e15e3ac" + // leaf 0
		"47cd5604e32c2893c62cf10568b147abe9be17332e6048924d59a99ad6902b4a" + // leaf 1
		"a61c0e6506f40ff2cb6059748f1c2090cd1ea45818a8e644d57536592ebb6ede" + // signature over the batch
		"135de27c6874828260dca8e07b09112e77165359f626c248a867168610e36e07"
	if got := hex.EncodeToString(out[0]); got != want {
		t.Fatalf("encoding changed:\n got %s\nwant %s", got, want)
	}
	for i, key := range []string{"/nodes/x", "/nodes/y"} {
		if _, err := openRecord(key, out[i], 1024, nil, nil); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
}

// TestBatchEnvelopeChecks: each record of a batch verifies on its own; the
// batch signature is checked once per cache; no record can be altered,
// moved to another key or passed off as another record of its batch.
func TestBatchEnvelopeChecks(t *testing.T) {
	priv, id := seededKey(t, 1)
	_, other := seededKey(t, 2)
	rs := []Record{
		{Key: "/jobs/a", Type: "commit", Author: id, Seq: 1, Payload: []byte("one")},
		{Key: "/jobs/b", Type: "result", Author: id, Seq: 2, Payload: []byte("two")},
		{Key: "/jobs/c", Author: id, Seq: 3, Tombstone: true},
	}
	out, err := sealBatch(rs, priv)
	if err != nil {
		t.Fatal(err)
	}
	sigs := newSigCache(16)
	for i, r := range rs {
		got, err := openRecord(r.Key, out[i], 1024, nil, sigs)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if got.Key != r.Key || got.Type != r.Type || got.Author != r.Author || got.Seq != r.Seq ||
			!bytes.Equal(got.Payload, r.Payload) || got.Tombstone != r.Tombstone {
			t.Fatalf("record %d: got %+v, want %+v", i, got, r)
		}
		if i == 0 && len(sigs.seen) != 1 {
			t.Fatalf("the batch signature is not remembered after the first record")
		}
	}
	if len(sigs.seen) != 1 {
		t.Fatalf("%d batch signatures remembered for one batch", len(sigs.seen))
	}
	e, err := decodeEnvelope(out[1], 1024)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.encode(), out[1]) {
		t.Fatal("re-encoding a batch record changed it")
	}
	leaf0 := len(out[0]) - sigLen - len(rs)*leafLen
	swap := func(b []byte, at int, v byte) []byte {
		c := append([]byte(nil), b...)
		c[at] = v
		return c
	}
	for _, c := range []struct {
		name string
		key  string
		data []byte
		want error
	}{
		{"payload changed", "/jobs/a", bytes.Replace(out[0], []byte("one"), []byte("uno"), 1), ErrBadSignature},
		{"other key", "/jobs/b", out[0], ErrKeyMismatch},
		{"claims another index", "/jobs/a", swap(out[0], leaf0-1, 1), ErrBadSignature},
		{"index out of range", "/jobs/a", swap(out[0], leaf0-1, 3), ErrMalformed},
		{"another record's leaf changed", "/jobs/a", swap(out[0], leaf0+leafLen, out[0][leaf0+leafLen]^1), ErrBadSignature},
		{"signature changed", "/jobs/a", swap(out[0], len(out[0])-1, out[0][len(out[0])-1]^1), ErrBadSignature},
		{"a batch of one", "/jobs/a", swap(out[0], leaf0-2, 1), ErrMalformed},
	} {
		// A fresh cache each time, and the shared one: a remembered
		// signature never vouches for altered bytes.
		for _, cache := range []*sigCache{nil, sigs} {
			if _, err := openRecord(c.key, c.data, 1024, nil, cache); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
	}
	// Signed by one key, claimed by another author: refused.
	forged := append([]Record(nil), rs...)
	forged[0].Author = other
	fo, err := sealBatch(forged, priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openRecord("/jobs/a", fo[0], 1024, nil, nil); !errors.Is(err, ErrBadAuthor) {
		t.Errorf("another author: %v, want ErrBadAuthor", err)
	}
	if _, err := sealBatch(rs[:1], priv); err == nil {
		t.Error("a batch of one record was sealed")
	}
}
