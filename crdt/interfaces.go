package crdt

import (
	"context"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Reader is the read side of the store: what most consumers need.
type Reader interface {
	Getter
	Query(ctx context.Context, prefix string) ([]Record, error)
	Watch(ctx context.Context, prefix string) <-chan Change
}

// Getter reads one record.
type Getter interface {
	Get(ctx context.Context, key string) (Record, error)
}

// Writer is the write side of the store.
type Writer interface {
	Put(ctx context.Context, key, recordType string, payload []byte) error
	Delete(ctx context.Context, key string) error
}

// Replicated is what a node's components use of its replicated state:
// a *Store, or a store that spreads records over several Stores by key
// (jobstore.Router) and answers for all of them.
type Replicated interface {
	Reader
	Writer
	// PutBatch writes entries as one update (see Store.PutBatch).
	PutBatch(ctx context.Context, entries []Entry) error
	// QueryKeys is Query for the keys keep accepts (see Store.QueryKeys).
	QueryKeys(ctx context.Context, prefix string, keep func(key string) bool) ([]Record, error)
	// Self is the peer ID that signs this node's writes.
	Self() peer.ID
	// RepairSoon asks for a repair of a dirty DAG (see Store.RepairSoon).
	RepairSoon()
	// Merged lists the DAG blocks the block GC must keep (see
	// Store.Merged).
	Merged(ctx context.Context) ([]cid.Cid, error)
}

var (
	_ Reader     = (*Store)(nil)
	_ Writer     = (*Store)(nil)
	_ Replicated = (*Store)(nil)
)
