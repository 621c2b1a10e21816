package dsguard

import (
	"context"
	"errors"
	"testing"

	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	dssync "github.com/ipfs/go-datastore/sync"
)

// TestShutRefusesEveryOperation: once shut, reads and writes get
// ErrClosed and never reach the datastore, which its owner may close next
// (a closed pebble panics on access).
func TestShutRefusesEveryOperation(t *testing.T) {
	g := New(dssync.MutexWrap(ds.NewMapDatastore()))
	ctx := context.Background()
	k := ds.NewKey("/a")
	if err := g.Put(ctx, k, []byte("x")); err != nil {
		t.Fatal(err)
	}
	res, err := g.Query(ctx, query.Query{})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if _, err := g.Get(ctx, k); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after close: %v", err)
	}
	if _, err := g.Has(ctx, k); !errors.Is(err, ErrClosed) {
		t.Fatalf("Has after close: %v", err)
	}
	if err := g.Put(ctx, k, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after close: %v", err)
	}
	// An iterator opened before Close ends with ErrClosed.
	r, ok := res.NextSync()
	if !ok || !errors.Is(r.Error, ErrClosed) {
		t.Fatalf("open iterator after close: %v %v", r, ok)
	}
	if _, ok := res.NextSync(); ok {
		t.Fatal("the iterator goes on after ErrClosed")
	}
}

// TestWritesCountWhatIsVisible: Writes grows with each completed Put,
// Delete and batch Commit, and a batch's writes count only once it is
// committed, when a read sees them.
func TestWritesCountWhatIsVisible(t *testing.T) {
	g := New(dssync.MutexWrap(ds.NewMapDatastore()))
	ctx := context.Background()
	k := ds.NewKey("/a")
	if err := g.Put(ctx, k, []byte("x")); err != nil || g.Writes() != 1 {
		t.Fatalf("after a Put: %d writes, %v", g.Writes(), err)
	}
	b, err := g.Batch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, ds.NewKey("/b"), []byte("y")); err != nil {
		t.Fatal(err)
	}
	if g.Writes() != 1 {
		t.Fatalf("an uncommitted batch counted: %d writes", g.Writes())
	}
	if err := b.Commit(ctx); err != nil || g.Writes() != 2 {
		t.Fatalf("after a Commit: %d writes, %v", g.Writes(), err)
	}
	if v, err := g.Get(ctx, ds.NewKey("/b")); err != nil || string(v) != "y" {
		t.Fatalf("the committed value: %q, %v", v, err)
	}
	if err := g.Delete(ctx, k); err != nil || g.Writes() != 3 {
		t.Fatalf("after a Delete: %d writes, %v", g.Writes(), err)
	}
	g.Shut()
	if err := g.Put(ctx, k, nil); !errors.Is(err, ErrClosed) || g.Writes() != 3 {
		t.Fatalf("a refused Put counted: %d writes, %v", g.Writes(), err)
	}
}
