// Package p2ptest starts libp2p hosts for tests.
package p2ptest

import (
	"context"
	"testing"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/p2p"
)

// Hosts starts n hosts on 127.0.0.1 without topic discovery, each
// connected to those before it, and closes them when the test ends.
func Hosts(t testing.TB, n int) []*p2p.Host {
	t.Helper()
	var hs []*p2p.Host
	for range n {
		cfg := p2p.LoopbackConfig()
		cfg.TopicDiscovery = false
		key, err := p2p.GenerateIdentity()
		if err != nil {
			t.Fatal(err)
		}
		h, err := p2p.New(context.Background(), p2p.Params{Config: cfg, Identity: key, Datastore: dssync.MutexWrap(ds.NewMapDatastore())})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		for _, o := range hs {
			if err := h.Connect(context.Background(), peer.AddrInfo{ID: o.ID(), Addrs: o.Addrs()}); err != nil {
				t.Fatal(err)
			}
		}
		hs = append(hs, h)
	}
	return hs
}

// NewPeerID returns the peer ID of a fresh Ed25519 identity.
func NewPeerID(t testing.TB) peer.ID {
	t.Helper()
	key, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
