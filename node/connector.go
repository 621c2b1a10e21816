package node

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// DefaultDialAllBelow is [p2p] dial_all_below's default: up to this many
// advertised processors, every node dials every one.
const DefaultDialAllBelow = 32

// dialsAll reports whether a node whose store advertises advertised
// processors dials all of them, under the [p2p] dial_all_below limit.
// The rule is for small meshes, whose DHT may not route between
// processors (DHT clients behind NAT, a few nodes); in a larger mesh it
// would give every node a connection to every other, so connections
// would grow with the square of the mesh. There a node relies on its
// bootstrap peers, the DHT, gossipsub's peer exchange and topic
// discovery, and the members that a room names (p2p.TopicConfig.Reach).
func dialsAll(advertised, limit int) bool {
	return limit > 0 && advertised <= limit
}

// keepMeshed dials the processors the replicated store advertises while
// the mesh is small (dialsAll), so that processors find each other even
// where the DHT cannot route between them. It stops adding connections
// once the host has ConnLow peers; unreachable peers back off.
func (n *Node) keepMeshed(ctx context.Context, every time.Duration) {
	defer n.wg.Done()
	backoffs := map[peer.ID]*p2p.Backoff{}
	changes := n.Store.Watch(ctx, records.NodesPrefix)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r := n.dialAdvertised(ctx, backoffs)
		// Connected to every advertised processor, the host shares every
		// topic it may join with peers it already has: the DHT could
		// find it no other (p2p.Host.PauseTopicDiscovery).
		n.Host.PauseTopicDiscovery(r.all && r.unconnected == 0)
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				waiting = false
			case _, ok := <-changes:
				if !ok {
					return
				}
				// Above the limit a change dials nobody: the
				// advertisements are counted again at the next tick,
				// not at every refresh of one of them, which would
				// cost each node a read of every advertisement per
				// advertisement, the cube of the mesh in all.
				waiting = !r.all
			}
		}
	}
}

// dialRound is what one round of dialAdvertised did.
type dialRound struct {
	reached []peer.ID // dialled and connected in this round
	// all: the mesh is small enough to dial every advertised processor
	// (dialsAll); unconnected: how many of the live ones
	// (meshview.AdvertLive), this node aside, the host is not connected
	// to after the round (unreachable, backing off, or past ConnLow).
	all         bool
	unconnected int
}

// dialAdvertised dials the advertised processors this host is not
// connected to, when dialsAll says so.
func (n *Node) dialAdvertised(ctx context.Context, backoffs map[peer.ID]*p2p.Backoff) dialRound {
	ads, err := n.Processors(ctx)
	if err != nil {
		// Try again at the next change; one unconnected keeps topic
		// discovery on meanwhile.
		return dialRound{all: true, unconnected: 1}
	}
	if !dialsAll(len(ads), n.Config.P2P.DialAllBelow) {
		return dialRound{}
	}
	r := dialRound{all: true}
	h := n.Host
	now, ttl := time.Now(), time.Duration(n.Config.Dispatch.AdvertTTL)
	for _, ad := range ads {
		id, err := peer.Decode(ad.PeerID)
		if err != nil || id == h.ID() || h.Network().Connectedness(id) == network.Connected {
			continue
		}
		if backoffs[id] == nil {
			backoffs[id] = p2p.NewBackoff(time.Second, 5*time.Minute)
		}
		switch {
		case n.dialAd(ctx, id, ad, backoffs[id], now):
			r.reached = append(r.reached, id)
		case meshview.AdvertLive(ad.Updated, now, ttl):
			// A processor gone for longer than the TTL (its
			// advertisement stays in the store) is still dialled at its
			// backoff, but is no topic peer to look for.
			r.unconnected++
		}
	}
	return r
}

// dialAd dials the processor id at the address its advertisement gives,
// only when that names id itself, the host is below ConnLow and the
// processor's backoff allows; it reports whether it connected.
func (n *Node) dialAd(ctx context.Context, id peer.ID, ad Advert, b *p2p.Backoff, now time.Time) bool {
	h := n.Host
	info, err := p2p.ParseAddrInfos(ad.Addrs)
	if err != nil || len(info) != 1 || info[0].ID != id || len(h.Network().Peers()) >= n.Config.P2P.ConnLow {
		return false
	}
	if !b.Ready(now) {
		return false
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = h.Connect(dctx, info[0])
	cancel()
	if err != nil {
		b.Failed(now)
		n.Log.Debug("advertised processor unreachable", "peer", id, "retry_in", b.Delay(), "err", err)
		return false
	}
	b.Reset()
	return true
}
