package ipfs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/libp2p/go-libp2p/core/network"
)

// TestUnprovidedDAGSkipsTheDHT: a block whose only route is a provider
// record on the DHT is not found through UnprovidedDAG (its sessions ask
// the connected peers only, so the fetcher never dials the provider), and
// is found through the node's DAG service.
func TestUnprovidedDAGSkipsTheDHT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := dhtClients(t, ctx)
	nd := merkledag.NodeWithData(randomBytes(1000, 7))
	if err := a.DAGService().Add(ctx, nd); err != nil {
		t.Fatal(err)
	}
	if err := a.Provide(ctx, nd.Cid()); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 2*time.Second)
	_, err := b.UnprovidedDAG().Get(short, nd.Cid())
	stop()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetching unprovided content: %v, want the deadline", err)
	}
	if b.h.Network().Connectedness(a.h.ID()) == network.Connected {
		t.Fatal("the unprovided fetch searched the DHT and dialled the provider")
	}
	got, err := b.DAGService().Get(ctx, nd.Cid())
	if err != nil {
		t.Fatalf("fetching through the DHT: %v", err)
	}
	if !got.Cid().Equals(nd.Cid()) {
		t.Fatalf("got %s, want %s", got.Cid(), nd.Cid())
	}
}
