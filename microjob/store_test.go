package microjob

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/crdt"
)

// TestRecordsInReplicatedStore writes result records through the real
// replicated store with AuthorPolicy installed: a processor's own records
// are written, read back and opened; a record under another peer's key is
// refused before it is signed.
func TestRecordsInReplicatedStore(t *testing.T) {
	ctx := context.Background()
	h, blocks, key := newHostStore(t)
	cfg := crdt.DefaultConfig()
	cfg.Datastore = dssync.MutexWrap(ds.NewMapDatastore())
	cfg.DAGService = blocks.DAGService()
	cfg.PubSub = h.PubSub
	cfg.PrivKey = key
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	cfg.AuthorPolicy = AuthorPolicy
	store, err := crdt.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	self := store.Self().String()
	d, c := sampleDisclosure(t, self)
	if err := store.Put(ctx, c.Key(), TypeCommit, c.Encode()); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, d.Key(), TypeResult, d.Encode()); err != nil {
		t.Fatal(err)
	}
	recs, err := store.Query(ctx, MicroKey(d.JobID, d.MacroIndex, d.MicroID))
	if err != nil || len(recs) != 2 {
		t.Fatalf("query: %d records, %v", len(recs), err)
	}
	for _, rec := range recs {
		switch rec.Type {
		case TypeCommit:
			got, err := OpenCommitment(rec.Key, rec.Author.String(), rec.Payload)
			if err != nil || got != c {
				t.Fatalf("commitment read back: %+v, %v", got, err)
			}
		case TypeResult:
			got, err := OpenDisclosure(rec.Key, rec.Author.String(), rec.Payload)
			if err != nil || got.Matches(c) != nil {
				t.Fatalf("disclosure read back: %v", err)
			}
		default:
			t.Fatalf("unexpected record type %q", rec.Type)
		}
	}

	// Writing a commitment in another processor's name is refused.
	other, _ := sampleDisclosure(t, newPeer(t))
	oc, _ := other.Commitment()
	err = store.Put(ctx, oc.Key(), TypeCommit, oc.Encode())
	if !errors.Is(err, crdt.ErrPolicy) || !errors.Is(err, ErrAuthor) {
		t.Fatalf("foreign key: err = %v, want crdt.ErrPolicy and ErrAuthor", err)
	}
}
