package crdt

import (
	"context"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Replicated is the replicated store as the node's parts use it: one
// *Store, or a router over the mesh's store and the job stores
// (jobstore.Router) that sends each key where its level says.
type Replicated interface {
	Reader
	Writer
	PutBatch(ctx context.Context, entries []Entry) error
	QueryKeys(ctx context.Context, prefix string, keep func(key string) bool) ([]Record, error)
	// Self is the peer whose key signs this node's records.
	Self() peer.ID
	// RepairSoon asks for a repair of missed updates before the repair
	// interval.
	RepairSoon()
	// Merged lists the DAG blocks of every delta merged (the block GC
	// keeps them).
	Merged(ctx context.Context) ([]cid.Cid, error)
}

var _ Replicated = (*Store)(nil)
