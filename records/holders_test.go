package records_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

var holderOutput = cid.MustParse("bafybeidide6lpcdutn3we5vvypssfhlq2n265w6dygwj37fyeklhlmfi34")

// TestHolderRecordsAuthor: a holder record counts only when its author is
// the peer it names. A peer without the policy in its own store (an
// attacker) that writes one naming another peer is refused by the honest
// replicas, and Holders does not list it; the peer's own record is.
func TestHolderRecordsAuthor(t *testing.T) {
	policy := records.AuthorPolicy()
	cl := crdttest.New(t, crdttest.Options{Replicas: 3, Configure: func(i int, cfg *crdt.Config) {
		if i != 2 {
			cfg.AuthorPolicy = policy
		}
	}})
	cl.WaitTopicMesh()
	honest, victim, attacker := cl.Replicas[0], cl.Replicas[1], cl.Replicas[2]
	ctx := context.Background()
	id := jobs.ID{7}

	// The policy itself.
	if err := policy(records.HolderKey(id, victim.ID()), attacker.ID()); err == nil {
		t.Fatal("a holder record under another peer's key passes the policy")
	}
	if err := policy(records.HolderKey(id, attacker.ID()), attacker.ID()); err != nil {
		t.Fatalf("own holder record refused: %v", err)
	}
	// An honest store refuses to write it at all.
	if err := records.WriteHolder(ctx, honest.Store, victim.ID(), id, holderOutput); !errors.Is(err, crdt.ErrPolicy) {
		t.Fatalf("honest store wrote a record for another peer: %v", err)
	}

	// The attacker's forged claim, then a genuine record by victim.
	if err := records.WriteHolder(ctx, attacker.Store, victim.ID(), id, holderOutput); err != nil {
		t.Fatal(err)
	}
	if err := attacker.Store.Put(ctx, records.HolderKey(id, attacker.ID()), records.HolderType, []byte(`{"output":"not a cid"}`)); err != nil {
		t.Fatal(err)
	}
	// Honest replicas see the forged claim, refuse it, and list no one.
	for _, r := range []*crdttest.Replica{honest, victim} {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			_, err := r.Store.Get(ctx, records.HolderKey(id, victim.ID()))
			if !errors.Is(err, crdt.ErrRejected) {
				return fmt.Errorf("replica %d: forged record: %v", r.Index, err)
			}
			return nil
		})
	}
	if got, err := records.HoldersOf(ctx, honest.Store, id, cid.Undef); err != nil || len(got) != 0 {
		t.Fatalf("holders after the forged claims: %v, %v", got, err)
	}
	if err := records.WriteHolder(ctx, victim.Store, victim.ID(), id, holderOutput); err != nil {
		t.Fatal(err)
	}
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		got, err := records.HoldersOf(ctx, honest.Store, id, cid.Undef)
		if err != nil {
			return err
		}
		if !slices.Equal(got, []peer.ID{victim.ID()}) {
			return fmt.Errorf("holders: %s", peerList(got))
		}
		return nil
	})
	// An attacker's claim for a peer that writes none is never listed.
	other := jobs.ID{8}
	if err := records.WriteHolder(ctx, attacker.Store, victim.ID(), other, holderOutput); err != nil {
		t.Fatal(err)
	}
	if err := attacker.Store.Put(ctx, records.JobKey(other)+"/marker", "marker", []byte("x")); err != nil {
		t.Fatal(err)
	}
	cl.WaitGet(0, records.JobKey(other)+"/marker", nil)
	if got, err := records.HoldersOf(ctx, honest.Store, other, cid.Undef); err != nil || len(got) != 0 {
		t.Fatalf("holders of a job only the attacker wrote about: %v, %v", got, err)
	}
}

func peerList(ps []peer.ID) string {
	s := ""
	for _, p := range ps {
		s += p.String() + " "
	}
	return s
}

// FuzzReadHolder: reading any holder record never panics, and what it
// accepts is within the size limit, under the key of the peer that wrote
// it, naming a CID.
func FuzzReadHolder(f *testing.F) {
	id := jobs.ID{7}
	author := peer.ID("author")
	f.Add(records.HolderKey(id, author), records.HolderType, []byte(`{"output":"`+holderOutput.String()+`"}`))
	f.Add(records.HolderKey(id, "other"), records.HolderType, []byte(`{"output":"`+holderOutput.String()+`"}`))
	f.Add(records.HolderKey(id, author), records.HolderType, []byte(`{"output":"not a cid"}`))
	f.Add(records.HolderKey(id, author), "verdict", []byte(`{"output":"`+holderOutput.String()+`","x":1}`))
	f.Fuzz(func(t *testing.T, key, typ string, payload []byte) {
		p, out, ok := records.ReadHolder(id, crdt.Record{Key: key, Type: typ, Payload: payload, Author: author})
		if !ok {
			return
		}
		if len(payload) > records.MaxRecord {
			t.Fatalf("accepted a %d-byte record", len(payload))
		}
		if p != author || key != records.HolderKey(id, author) || typ != records.HolderType {
			t.Fatalf("accepted %q (%s) as %s's", key, typ, p)
		}
		if !out.Defined() || !bytes.Contains(payload, []byte(`"output"`)) {
			t.Fatalf("accepted output %s from %q", out, payload)
		}
	})
}
