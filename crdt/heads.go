package crdt

import (
	"context"
	"fmt"
	"strings"

	"github.com/ipfs/boxo/datastore/dshelp"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
)

// Heads returns the CIDs of the replica's DAG heads. Every delta under
// them has been merged, but not every merged delta is under them yet:
// see Merged.
func (s *Store) Heads(ctx context.Context) ([]cid.Cid, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	return s.crdt.InternalStats(ctx).Heads, nil
}

// processedNamespace is where go-ds-crdt marks, under the store's
// namespace, each delta block it has merged.
const processedNamespace = "b"

// Merged returns the heads and the CIDs of every delta the replica has
// merged: the blocks a block layer that collects garbage must keep
// (ipfs.Node.StartGC). The heads alone are not enough: go-ds-crdt walks
// a received head down to a delta it knows and merges each delta on the
// way, but makes the head a head only when the walk ends, so a walk that
// waits for a block longer than the GC's grace period would lose the
// deltas it already merged, and the replica's history would keep the
// hole.
func (s *Store) Merged(ctx context.Context) ([]cid.Cid, error) {
	heads, err := s.Heads(ctx)
	if err != nil {
		return nil, err
	}
	prefix := datastore.NewKey(s.cfg.Namespace).ChildString(processedNamespace)
	res, err := s.guard.Query(ctx, query.Query{Prefix: prefix.String(), KeysOnly: true})
	if err != nil {
		return nil, fmt.Errorf("crdt: listing merged deltas: %w", err)
	}
	defer res.Close()
	out := heads
	for r := range res.Next() {
		if r.Error != nil {
			return nil, fmt.Errorf("crdt: listing merged deltas: %w", r.Error)
		}
		name := r.Key[strings.LastIndexByte(r.Key, '/')+1:]
		h, err := dshelp.DsKeyToMultihash(datastore.NewKey(name))
		if err != nil {
			continue // not a mark of go-ds-crdt's
		}
		out = append(out, cid.NewCidV1(cid.DagProtobuf, h))
	}
	return out, nil
}
