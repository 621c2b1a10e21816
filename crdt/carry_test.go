package crdt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

// carryType is the carrying record type of these tests: it may carry
// records beside it (under the same parent key).
const carryType = "carry"

func carryConfig(_ int, cfg *crdt.Config) {
	cfg.AuthorPolicy = crdt.OwnerPolicy("/rooms/a/own")
	cfg.Carriage = &crdt.Carriage{
		Types: []string{carryType},
		Policy: func(carrier, inner string) error {
			if !strings.HasPrefix(inner, path.Dir(carrier)+"/") {
				return fmt.Errorf("%q is not beside %q", inner, carrier)
			}
			return nil
		},
	}
}

// author is a peer outside the cluster that signs records by hand.
type author struct {
	key crypto.PrivKey
	id  peer.ID
}

func newAuthor(t *testing.T) author {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return author{k, id}
}

// seal signs a record of key by a at seq.
func (a author) seal(t *testing.T, key, payload string, seq uint64, tombstone bool) []byte {
	t.Helper()
	env, err := crdt.Seal(crdt.Record{Key: key, Type: "rec", Author: a.id, Seq: seq, Payload: []byte(payload), Tombstone: tombstone}, a.key)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func carrying(t *testing.T, envs ...[]byte) []byte {
	t.Helper()
	p, err := crdt.EncodeCarried(envs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A replica that never held the store the records were written to takes
// them from a carrying record: it reads them with Get, Query and Watch,
// and refuses, counting each, a forged one, one the carrier may not carry,
// a deletion and one its author may not write, keeping the rest.
func TestCarriedRecordsAreReadAsIfWritten(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: carryConfig})
	ctx := context.Background()
	x, y := newAuthor(t), newAuthor(t)
	seq := uint64(time.Now().UnixNano())
	good := [][]byte{x.seal(t, "/rooms/a/x", "from x", seq, false), y.seal(t, "/rooms/a/y", "from y", seq, false)}
	forged := x.seal(t, "/rooms/a/z", "from x", seq, false)
	forged[bytes.Index(forged, []byte("from x"))] ^= 1
	outside := x.seal(t, "/rooms/b/w", "elsewhere", seq, false)
	deletion := x.seal(t, "/rooms/a/t", "", seq, true)
	notHis := x.seal(t, "/rooms/a/own/"+y.id.String(), "x as y", seq, false)

	watch := c.Replicas[1].Store.Watch(ctx, "/rooms/a")
	payload := carrying(t, good[0], forged, outside, good[1], deletion, notHis)
	if err := c.Replicas[0].Store.Put(ctx, "/rooms/a/carrier", carryType, payload); err != nil {
		t.Fatal(err)
	}
	reader := c.Replicas[1].Store
	for i, a := range []author{x, y} {
		key := []string{"/rooms/a/x", "/rooms/a/y"}[i]
		r := c.WaitGet(1, key, nil)
		if r.Author != a.id || string(r.Payload) != "from "+key[len(key)-1:] || r.Seq != seq {
			t.Fatalf("%s read as %+v", key, r)
		}
		env, err := reader.Envelope(ctx, key)
		if err != nil || !bytes.Equal(env, good[i]) {
			t.Fatalf("Envelope(%s) = %x, %v; want the author's envelope", key, env, err)
		}
	}
	for _, key := range []string{"/rooms/a/z", "/rooms/b/w", "/rooms/a/t", "/rooms/a/own/" + y.id.String()} {
		if _, err := reader.Get(ctx, key); !errors.Is(err, crdt.ErrNotFound) {
			t.Errorf("Get(%s) = %v, want ErrNotFound", key, err)
		}
	}
	recs, err := reader.Query(ctx, "/rooms")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	if want := []string{"/rooms/a/carrier", "/rooms/a/x", "/rooms/a/y"}; !slices.Equal(keys, want) {
		t.Fatalf("Query(/rooms) = %v, want %v", keys, want)
	}
	kept, err := reader.QueryKeys(ctx, "/rooms/a", func(k string) bool { return k != "/rooms/a/x" })
	if err != nil || len(kept) != 2 || kept[1].Key != "/rooms/a/y" {
		t.Fatalf("QueryKeys without x = %v, %v", kept, err)
	}
	seen := map[string]bool{}
	for !seen["/rooms/a/x"] || !seen["/rooms/a/y"] {
		ch := nextChange(t, watch)
		if ch.Kind == crdt.ChangePut {
			seen[ch.Key] = true
		}
	}
	reg := c.Replicas[1].Registry
	for reason, want := range map[string]float64{"bad_signature": 1, "carriage": 2, "policy": 1} {
		if got := crdttest.Metric(t, reg, "jobmesh_crdt_records_rejected_total", map[string]string{"reason": reason}); got != want {
			t.Errorf("rejected %s = %v, want %v", reason, got, want)
		}
	}
	if got := crdttest.Metric(t, reg, "jobmesh_crdt_records_carried_total", nil); got != 2 {
		t.Errorf("carried = %v, want 2", got)
	}
}

// A key that is both written and carried reads at the newer of the two,
// on every replica, whichever arrives first.
func TestNewerOfWrittenAndCarriedWins(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: carryConfig})
	ctx := context.Background()
	w := c.Replicas[0]
	me := author{w.Key, w.ID()}
	if err := w.Store.Put(ctx, "/rooms/a/k", "rec", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	v1 := c.WaitGet(1, "/rooms/a/k", nil)
	later := me.seal(t, "/rooms/a/k", "v2", v1.Seq+10, false)
	if err := w.Store.Put(ctx, "/rooms/a/carrier", carryType, carrying(t, later)); err != nil {
		t.Fatal(err)
	}
	for i := range c.Replicas {
		c.WaitGet(i, "/rooms/a/k", func(r crdt.Record) bool { return string(r.Payload) == "v2" })
	}
	// An older copy carried later changes nothing.
	older := me.seal(t, "/rooms/a/k", "v0", v1.Seq-10, false)
	if err := w.Store.Put(ctx, "/rooms/a/carrier", carryType, carrying(t, older)); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(1, "/rooms/a/carrier", func(r crdt.Record) bool { return bytes.Contains(r.Payload, []byte("v0")) })
	if r, err := c.Replicas[1].Store.Get(ctx, "/rooms/a/k"); err != nil || string(r.Payload) != "v2" {
		t.Fatalf("after an older carried copy: %+v, %v; want v2", r, err)
	}
	// A newer write wins over the carried copy, in Get and Query alike.
	if err := w.Store.Put(ctx, "/rooms/a/k", "rec", []byte("v3")); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(1, "/rooms/a/k", func(r crdt.Record) bool { return string(r.Payload) == "v3" })
	recs, err := c.Replicas[1].Store.Query(ctx, "/rooms/a")
	if err != nil || len(recs) != 2 || string(recs[1].Payload) != "v3" {
		t.Fatalf("Query = %v, %v; want the carrier and v3", recs, err)
	}
}

func TestDecodeCarriedRefusesMalformedSets(t *testing.T) {
	one, err := crdt.EncodeCarried([][]byte{[]byte("ab")})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":       nil,
		"version 2":   {2, 1, 2, 'a', 'b'},
		"no records":  {1, 0},
		"too many":    {1, 0x81, 0x02},
		"truncated":   one[:len(one)-1],
		"trailing":    append(slices.Clone(one), 0),
		"long length": {1, 1, 9, 'a'},
		"non-minimal": {1, 0x81, 0x00, 2, 'a', 'b'},
	} {
		if _, err := crdt.DecodeCarried(b); !errors.Is(err, crdt.ErrMalformed) {
			t.Errorf("%s: DecodeCarried(%x) = %v, want ErrMalformed", name, b, err)
		}
	}
	if _, err := crdt.EncodeCarried(make([][]byte, crdt.MaxCarried+1)); !errors.Is(err, crdt.ErrCarriage) {
		t.Errorf("EncodeCarried of %d envelopes: %v", crdt.MaxCarried+1, err)
	}
}

func FuzzDecodeCarried(f *testing.F) {
	one, _ := crdt.EncodeCarried([][]byte{[]byte("ab"), {}, []byte("c")})
	f.Add(one)
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		envs, err := crdt.DecodeCarried(b)
		if err != nil {
			return
		}
		again, err := crdt.EncodeCarried(envs)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("DecodeCarried(%x) decoded, but encodes back to %x, %v", b, again, err)
		}
	})
}
