package crdt_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

func TestForgedRecordsAreRejectedOnEveryReplica(t *testing.T) {
	const maxPayload = 1024
	c := crdttest.New(t, crdttest.Options{Replicas: 5, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = crdt.OwnerPolicy("/nodes")
		cfg.MaxPayload = maxPayload
	}})
	ctx := context.Background()
	injector := c.Replicas[0]
	victim := c.Replicas[1]

	if err := victim.Store.Put(ctx, "/nodes/"+victim.ID().String(), "node", []byte("good")); err != nil {
		t.Fatal(err)
	}
	if err := victim.Store.Put(ctx, "/jobs/original", "job", []byte("good job")); err != nil {
		t.Fatal(err)
	}
	forged := forgedRecords(t, victim, maxPayload)
	for key, f := range forged {
		if err := injector.Store.PutRaw(ctx, key, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := victim.Store.Put(ctx, "/jobs/after", "job", []byte("still working")); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Replicas {
		c.WaitGet(r.Index, "/jobs/after", nil)
		checkForgedRejected(t, r, forged)
		// Reading the bad records again neither recounts them nor hides
		// the good ones. Heads are walked in parallel, so the earlier
		// good records may land after /jobs/after: wait for them.
		want := []string{"/jobs/after", "/jobs/original", "/nodes/" + victim.ID().String()}
		crdttest.WaitUntil(t, waitFor, func() error {
			recs, err := r.Store.Query(ctx, "/")
			if err != nil {
				return err
			}
			var keys []string
			for _, rec := range recs {
				keys = append(keys, rec.Key)
			}
			if strings.Join(keys, " ") != strings.Join(want, " ") {
				return fmt.Errorf("replica %d: query returned %v, want %v", r.Index, keys, want)
			}
			return nil
		})
		if got := crdttest.Metric(t, r.Registry, "jobmesh_crdt_records_rejected_total",
			map[string]string{"reason": "bad_signature"}); got != 1 {
			t.Fatalf("replica %d: re-reading recounted: %v", r.Index, got)
		}
	}
	// The store keeps accepting and serving good writes.
	if err := c.Replicas[4].Store.Put(ctx, "/jobs/last", "job", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Replicas {
		c.WaitGet(r.Index, "/jobs/last", nil)
	}
}

// forgedRecord is a raw record injected under a key, and the reason every
// replica must reject it for.
type forgedRecord struct {
	data   []byte
	reason error
}

// forgedRecords are records a forger injects against victim, which holds
// /jobs/original, in a store whose payloads are capped at maxPayload.
func forgedRecords(t *testing.T, victim *crdttest.Replica, maxPayload int) map[string]forgedRecord {
	t.Helper()
	forger, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	forgerID, _ := peer.IDFromPrivateKey(forger)
	seal := func(r crdt.Record, k crypto.PrivKey) []byte {
		b, err := crdt.Seal(r, k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// A victim-signed envelope with its payload altered: valid encoding,
	// wrong signature.
	badSig := seal(crdt.Record{Key: "/jobs/forged", Type: "job", Author: victim.ID(), Seq: 1, Payload: []byte("pay me")}, victim.Key)
	badSig[len(badSig)-64-1] ^= 0xff
	return map[string]forgedRecord{
		"/jobs/forged": {badSig, crdt.ErrBadSignature},
		// Validly signed by the forger, under the victim's own key.
		"/nodes/" + victim.ID().String() + "/claim": {
			seal(crdt.Record{Key: "/nodes/" + victim.ID().String() + "/claim", Type: "node", Author: forgerID, Seq: 1}, forger),
			crdt.ErrPolicy},
		// The victim's genuine record replayed under another key.
		"/jobs/replayed": {
			seal(crdt.Record{Key: "/jobs/original", Type: "job", Author: victim.ID(), Seq: 5, Payload: []byte("good job")}, victim.Key),
			crdt.ErrKeyMismatch},
		// Genuine signature, payload over the readers' limit.
		"/jobs/huge": {
			seal(crdt.Record{Key: "/jobs/huge", Type: "job", Author: forgerID, Seq: 1, Payload: make([]byte, maxPayload+1)}, forger),
			crdt.ErrOversized},
		"/jobs/garbage": {[]byte("\x09 not an envelope"), crdt.ErrUnknownVersion},
	}
}

// checkForgedRejected waits until replica r rejects every forged record for
// its reason, and checks that each was counted once.
func checkForgedRejected(t *testing.T, r *crdttest.Replica, forged map[string]forgedRecord) {
	t.Helper()
	ctx := context.Background()
	for key, f := range forged {
		crdttest.WaitUntil(t, waitFor, func() error {
			_, err := r.Store.Get(ctx, key)
			if !errors.Is(err, crdt.ErrRejected) || !errors.Is(err, f.reason) {
				return fmt.Errorf("replica %d, %s: got %v, want %v", r.Index, key, err, f.reason)
			}
			return nil
		})
		got := crdttest.Metric(t, r.Registry, "jobmesh_crdt_records_rejected_total",
			map[string]string{"reason": crdt.Reason(f.reason)})
		if got != 1 {
			t.Fatalf("replica %d: rejected{reason=%s} = %v, want 1", r.Index, crdt.Reason(f.reason), got)
		}
	}
}

func TestOversizedPayloadIsRefusedOnPut(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1, Configure: func(_ int, cfg *crdt.Config) {
		cfg.MaxPayload = 100
	}})
	s := c.Replicas[0].Store
	ctx := context.Background()
	err := s.Put(ctx, "/jobs/big", "job", make([]byte, 101))
	if !errors.Is(err, crdt.ErrOversized) {
		t.Fatalf("got %v, want ErrOversized", err)
	}
	if !strings.Contains(err.Error(), "101") || !strings.Contains(err.Error(), "100") {
		t.Fatalf("error does not say the sizes: %v", err)
	}
	if _, err := s.Get(ctx, "/jobs/big"); !errors.Is(err, crdt.ErrNotFound) {
		t.Fatalf("refused record was stored: %v", err)
	}
	if err := s.Put(ctx, "/jobs/big", "job", make([]byte, 100)); err != nil {
		t.Fatalf("payload at the limit refused: %v", err)
	}
}

func TestWritesOutsidePolicyOrWithBadKeysAreRefused(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = crdt.OwnerPolicy("/nodes")
	}})
	s := c.Replicas[0].Store
	ctx := context.Background()
	other, _, _ := crypto.GenerateEd25519Key(nil)
	otherID, _ := peer.IDFromPrivateKey(other)
	if err := s.Put(ctx, "/nodes/"+otherID.String(), "node", nil); !errors.Is(err, crdt.ErrPolicy) {
		t.Fatalf("writing another peer's node record: %v", err)
	}
	if err := s.Delete(ctx, "/nodes/"+otherID.String()); !errors.Is(err, crdt.ErrPolicy) {
		t.Fatalf("deleting another peer's node record: %v", err)
	}
	if err := s.Put(ctx, "/nodes/"+s.Self().String(), "node", nil); err != nil {
		t.Fatalf("writing own node record: %v", err)
	}
	for _, key := range []string{"", "/", "jobs/x", "/jobs//x", "/jobs/x/", "/" + strings.Repeat("k", crdt.MaxKeyLen)} {
		if err := s.Put(ctx, key, "job", nil); !errors.Is(err, crdt.ErrInvalidKey) {
			t.Errorf("Put(%q): %v, want ErrInvalidKey", key, err)
		}
	}
	for _, typ := range []string{"", "Job", "job type", strings.Repeat("t", crdt.MaxTypeLen+1)} {
		if err := s.Put(ctx, "/jobs/x", typ, nil); !errors.Is(err, crdt.ErrInvalidType) {
			t.Errorf("Put type %q: %v, want ErrInvalidType", typ, err)
		}
	}
}

// go-ds-crdt tombstones carry no signature, so a peer that bypasses the
// store can remove a value; watchers still learn of it, as a delete without
// a record.
func TestUnsignedTombstoneReachesWatchers(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	ctx := context.Background()
	if err := c.Replicas[0].Store.Put(ctx, "/jobs/a", "job", []byte("A")); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(1, "/jobs/a", nil)
	w := c.Replicas[1].Store.Watch(ctx, "/jobs")
	if err := c.Replicas[0].Store.DeleteRaw(ctx, "/jobs/a"); err != nil {
		t.Fatal(err)
	}
	ch := nextChange(t, w)
	if ch.Kind != crdt.ChangeDelete || ch.Key != "/jobs/a" || ch.Record.Author != "" {
		t.Fatalf("got %+v", ch)
	}
	if _, err := c.Replicas[1].Store.Get(ctx, "/jobs/a"); !errors.Is(err, crdt.ErrNotFound) {
		t.Fatalf("after tombstone: %v", err)
	}
}
