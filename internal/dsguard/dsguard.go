// Package dsguard wraps a datastore so that, once its user is closed,
// every operation fails with ErrClosed and never reaches the datastore,
// which its owner may close next. Libraries that keep goroutines running
// past their own Close (bitswap, go-ds-crdt's parallel head walkers) would
// otherwise read a closed pebble database, which panics.
package dsguard

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
)

// ErrClosed is returned by every operation after Shut.
var ErrClosed = errors.New("datastore use after close")

// Datastore refuses every operation once shut, and Shut waits for the ones
// under way.
type Datastore struct {
	inner ds.Batching

	mu     sync.RWMutex
	closed bool
	// writes counts the writes that completed (Writes).
	writes atomic.Uint64
}

// Writes returns how many writes (a Put, a Delete, a batch's Commit) have
// completed: every write counted in a number read is visible to the reads
// that follow, so a reader that found nothing new at one number need not
// look again until it changes.
func (g *Datastore) Writes() uint64 { return g.writes.Load() }

// wrote counts a write that returned err.
func (g *Datastore) wrote(err error) error {
	if err == nil {
		g.writes.Add(1)
	}
	return err
}

var _ ds.Batching = (*Datastore)(nil)

func (g *Datastore) enter() error {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (g *Datastore) leave() { g.mu.RUnlock() }

// New wraps inner.
func New(inner ds.Batching) *Datastore { return &Datastore{inner: inner} }

// Shut refuses new operations and waits for those under way. The inner
// datastore stays open.
func (g *Datastore) Shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (g *Datastore) Get(ctx context.Context, k ds.Key) ([]byte, error) {
	if err := g.enter(); err != nil {
		return nil, err
	}
	defer g.leave()
	return g.inner.Get(ctx, k)
}

func (g *Datastore) Has(ctx context.Context, k ds.Key) (bool, error) {
	if err := g.enter(); err != nil {
		return false, err
	}
	defer g.leave()
	return g.inner.Has(ctx, k)
}

func (g *Datastore) GetSize(ctx context.Context, k ds.Key) (int, error) {
	if err := g.enter(); err != nil {
		return -1, err
	}
	defer g.leave()
	return g.inner.GetSize(ctx, k)
}

// Query guards each step of the results too, so an iterator left open
// across Close ends instead of reading a closed datastore.
func (g *Datastore) Query(ctx context.Context, q query.Query) (query.Results, error) {
	if err := g.enter(); err != nil {
		return nil, err
	}
	res, err := g.inner.Query(ctx, q)
	g.leave()
	if err != nil {
		return nil, err
	}
	ended := false
	return query.ResultsFromIterator(q, query.Iterator{
		Next: func() (query.Result, bool) {
			if ended {
				return query.Result{}, false
			}
			if err := g.enter(); err != nil {
				ended = true
				return query.Result{Error: err}, true
			}
			defer g.leave()
			return res.NextSync()
		},
		Close: func() error {
			if err := g.enter(); err != nil {
				return nil // the owner closes the datastore and its iterators
			}
			defer g.leave()
			return res.Close()
		},
	}), nil
}

func (g *Datastore) Put(ctx context.Context, k ds.Key, v []byte) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.leave()
	return g.wrote(g.inner.Put(ctx, k, v))
}

func (g *Datastore) Delete(ctx context.Context, k ds.Key) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.leave()
	return g.wrote(g.inner.Delete(ctx, k))
}

func (g *Datastore) Sync(ctx context.Context, prefix ds.Key) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.leave()
	return g.inner.Sync(ctx, prefix)
}

// Close shuts the guard; it does not close the inner datastore: its owner
// does.
func (g *Datastore) Close() error {
	g.Shut()
	return nil
}

func (g *Datastore) Batch(ctx context.Context) (ds.Batch, error) {
	if err := g.enter(); err != nil {
		return nil, err
	}
	defer g.leave()
	b, err := g.inner.Batch(ctx)
	if err != nil {
		return nil, err
	}
	return &batch{g: g, inner: b}, nil
}

type batch struct {
	g     *Datastore
	inner ds.Batch
}

func (b *batch) Put(ctx context.Context, k ds.Key, v []byte) error {
	if err := b.g.enter(); err != nil {
		return err
	}
	defer b.g.leave()
	return b.inner.Put(ctx, k, v)
}

func (b *batch) Delete(ctx context.Context, k ds.Key) error {
	if err := b.g.enter(); err != nil {
		return err
	}
	defer b.g.leave()
	return b.inner.Delete(ctx, k)
}

func (b *batch) Commit(ctx context.Context) error {
	if err := b.g.enter(); err != nil {
		return err
	}
	defer b.g.leave()
	return b.g.wrote(b.inner.Commit(ctx))
}
