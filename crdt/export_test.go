package crdt

import (
	"context"

	"github.com/ipfs/go-datastore"
	"github.com/libp2p/go-libp2p/core/crypto"
)

// PutRaw writes value under key straight into go-ds-crdt, bypassing signing
// and checks, as a peer that does not run jobmesh's store could.
func (s *Store) PutRaw(ctx context.Context, key string, value []byte) error {
	return s.crdt.Put(ctx, datastore.NewKey(key), value)
}

// DeleteRaw tombstones key in go-ds-crdt without a signed record.
func (s *Store) DeleteRaw(ctx context.Context, key string) error {
	return s.crdt.Delete(ctx, datastore.NewKey(key))
}

// Seal encodes and signs r with priv without any limit check.
func Seal(r Record, priv crypto.PrivKey) ([]byte, error) { return sealRecord(r, priv) }
