// Package ipfstest starts real block layers for tests: a boxo node with
// bitswap on a loopback libp2p host, over an in-memory datastore.
package ipfstest

import (
	"context"
	"testing"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/p2p"
)

// New starts a block layer with the default config on a new loopback host
// with no peers, and returns the host, the node and the host's key. Both
// are closed when the test ends.
func New(t testing.TB) (*p2p.Host, *ipfs.Node, crypto.PrivKey) {
	t.Helper()
	cfg := p2p.LoopbackConfig()
	cfg.TopicDiscovery = false
	key, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	h, err := p2p.New(context.Background(), p2p.Params{Config: cfg, Identity: key})
	if err != nil {
		t.Fatal(err)
	}
	n, err := ipfs.New(context.Background(), ipfs.Params{
		Config: ipfs.DefaultConfig(), Host: h, Routing: h.DHT,
		Datastore: dssync.MutexWrap(ds.NewMapDatastore()),
	})
	if err != nil {
		_ = h.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(); h.Close() })
	return h, n, key
}
