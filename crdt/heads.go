package crdt

import (
	"context"

	"github.com/ipfs/go-cid"
)

// Heads returns the CIDs of the replica's DAG heads. Every delta it has
// applied is reachable from them through the DAG's links, so a block
// layer that collects garbage keeps the store's history by keeping the
// DAGs under them whole (ipfs.Node.StartGC).
func (s *Store) Heads(ctx context.Context) ([]cid.Cid, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	return s.crdt.InternalStats(ctx).Heads, nil
}
