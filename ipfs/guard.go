package ipfs

import (
	"context"
	"errors"
	"sync"

	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
)

// ErrClosed is returned by block reads and writes after Close.
var ErrClosed = errors.New("ipfs: block layer closed")

// guardedDatastore refuses every operation once the block layer is closed,
// and close waits for the ones under way. Bitswap can still touch the
// blockstore from goroutines of its own after its Close returns; without
// the guard those reads reach a datastore its owner has since closed, and
// pebble panics on a closed database.
type guardedDatastore struct {
	inner ds.Batching

	mu     sync.RWMutex
	closed bool
}

var _ ds.Batching = (*guardedDatastore)(nil)

func (g *guardedDatastore) enter() error {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

func (g *guardedDatastore) leave() { g.mu.RUnlock() }

// shut refuses new operations and waits for those under way.
func (g *guardedDatastore) shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

func (g *guardedDatastore) Get(ctx context.Context, k ds.Key) ([]byte, error) {
	if err := g.enter(); err != nil {
		return nil, err
	}
	defer g.leave()
	return g.inner.Get(ctx, k)
}

func (g *guardedDatastore) Has(ctx context.Context, k ds.Key) (bool, error) {
	if err := g.enter(); err != nil {
		return false, err
	}
	defer g.leave()
	return g.inner.Has(ctx, k)
}

func (g *guardedDatastore) GetSize(ctx context.Context, k ds.Key) (int, error) {
	if err := g.enter(); err != nil {
		return -1, err
	}
	defer g.leave()
	return g.inner.GetSize(ctx, k)
}

// Query guards each step of the results too, so an iterator left open
// across Close ends instead of reading a closed datastore.
func (g *guardedDatastore) Query(ctx context.Context, q query.Query) (query.Results, error) {
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

func (g *guardedDatastore) Put(ctx context.Context, k ds.Key, v []byte) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.leave()
	return g.inner.Put(ctx, k, v)
}

func (g *guardedDatastore) Delete(ctx context.Context, k ds.Key) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.leave()
	return g.inner.Delete(ctx, k)
}

func (g *guardedDatastore) Sync(ctx context.Context, prefix ds.Key) error {
	if err := g.enter(); err != nil {
		return err
	}
	defer g.leave()
	return g.inner.Sync(ctx, prefix)
}

// Close does not close the inner datastore: its owner does.
func (g *guardedDatastore) Close() error {
	g.shut()
	return nil
}

func (g *guardedDatastore) Batch(ctx context.Context) (ds.Batch, error) {
	if err := g.enter(); err != nil {
		return nil, err
	}
	defer g.leave()
	b, err := g.inner.Batch(ctx)
	if err != nil {
		return nil, err
	}
	return &guardedBatch{g: g, inner: b}, nil
}

type guardedBatch struct {
	g     *guardedDatastore
	inner ds.Batch
}

func (b *guardedBatch) Put(ctx context.Context, k ds.Key, v []byte) error {
	if err := b.g.enter(); err != nil {
		return err
	}
	defer b.g.leave()
	return b.inner.Put(ctx, k, v)
}

func (b *guardedBatch) Delete(ctx context.Context, k ds.Key) error {
	if err := b.g.enter(); err != nil {
		return err
	}
	defer b.g.leave()
	return b.inner.Delete(ctx, k)
}

func (b *guardedBatch) Commit(ctx context.Context) error {
	if err := b.g.enter(); err != nil {
		return err
	}
	defer b.g.leave()
	return b.inner.Commit(ctx)
}
