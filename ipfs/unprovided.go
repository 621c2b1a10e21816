package ipfs

import (
	"context"

	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"
)

// Some content is never provided on the DHT: the replicated store's DAG
// blocks travel with the store's own announcements, and only the peers
// that hold them can serve them. Bitswap would still search the DHT for
// every such block a session waits for (after ProviderSearchDelay, or at
// once when every asked peer says it does not have it yet), a query to
// many peers that can never find anyone. Fetches made through
// UnprovidedDAG ask the connected peers only.

// unprovidedKey marks a context whose bitswap fetches skip the DHT.
type unprovidedKey struct{}

// withoutProviderSearch marks ctx so that bitswap sessions started under
// it do not search the DHT for providers.
func withoutProviderSearch(ctx context.Context) context.Context {
	return context.WithValue(ctx, unprovidedKey{}, true)
}

// searchFilter is the provider finder bitswap sessions use: the node's
// provider query manager, except for sessions of unprovided content.
type searchFilter struct {
	routing.ContentDiscovery
}

// FindProvidersAsync implements routing.ContentDiscovery.
func (f searchFilter) FindProvidersAsync(ctx context.Context, c cid.Cid, n int) <-chan peer.AddrInfo {
	if ctx.Value(unprovidedKey{}) != nil {
		ch := make(chan peer.AddrInfo)
		close(ch)
		return ch
	}
	return f.ContentDiscovery.FindProvidersAsync(ctx, c, n)
}

// unprovidedDAG is a DAG service whose fetches ask connected peers only.
type unprovidedDAG struct {
	ipld.DAGService
}

// Get implements ipld.NodeGetter.
func (d unprovidedDAG) Get(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	return d.DAGService.Get(withoutProviderSearch(ctx), c)
}

// GetMany implements ipld.NodeGetter.
func (d unprovidedDAG) GetMany(ctx context.Context, cs []cid.Cid) <-chan *ipld.NodeOption {
	return d.DAGService.GetMany(withoutProviderSearch(ctx), cs)
}

// UnprovidedDAG is the node's DAG service for content that nobody
// provides on the DHT, such as the replicated store's blocks: a block
// that is not local is asked of the connected peers, never searched for
// on the DHT.
func (n *Node) UnprovidedDAG() ipld.DAGService { return unprovidedDAG{n.dag} }
