package records_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/ipfs/ipfstest"
	"github.com/jobmesh/jobmesh/records"
)

// TestRecordsInReplicatedStore writes result records through the real
// replicated store with AuthorPolicy installed: a processor's own records
// are written, read back and opened; a record under another peer's key is
// refused before it is signed.
func TestRecordsInReplicatedStore(t *testing.T) {
	ctx := context.Background()
	h, blocks, key := ipfstest.New(t)
	cfg := crdt.DefaultConfig()
	cfg.Datastore = dssync.MutexWrap(ds.NewMapDatastore())
	cfg.DAGService = blocks.DAGService()
	cfg.PubSub = h.PubSub
	cfg.PrivKey = key
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	cfg.AuthorPolicy = records.AuthorPolicy()
	store, err := crdt.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	self := store.Self().String()
	d, c := sampleDisclosure(t, self)
	if err := store.Put(ctx, records.CommitmentKey(c), records.CommitType, c.Encode()); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, records.DisclosureKey(d), records.ResultType, d.Encode()); err != nil {
		t.Fatal(err)
	}
	recs, err := store.Query(ctx, records.MicroKey(d.JobID, d.MacroIndex, d.MicroID))
	if err != nil || len(recs) != 2 {
		t.Fatalf("query: %d records, %v", len(recs), err)
	}
	for _, rec := range recs {
		switch rec.Type {
		case records.CommitType:
			got, err := records.OpenCommitment(rec.Key, rec.Author.String(), rec.Payload)
			if err != nil || got != c {
				t.Fatalf("commitment read back: %+v, %v", got, err)
			}
		case records.ResultType:
			got, err := records.OpenDisclosure(rec.Key, rec.Author.String(), rec.Payload)
			if err != nil || got.Matches(c) != nil {
				t.Fatalf("disclosure read back: %v", err)
			}
		default:
			t.Fatalf("unexpected record type %q", rec.Type)
		}
	}

	// Writing a commitment in another processor's name is refused.
	other, _ := sampleDisclosure(t, newPeer(t).String())
	oc, _ := other.Commitment()
	err = store.Put(ctx, records.CommitmentKey(oc), records.CommitType, oc.Encode())
	if !errors.Is(err, crdt.ErrPolicy) || !errors.Is(err, records.ErrAuthor) {
		t.Fatalf("foreign key: err = %v, want crdt.ErrPolicy and ErrAuthor", err)
	}
}
