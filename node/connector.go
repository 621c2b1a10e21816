package node

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// keepMeshed dials the processors the replicated store advertises, so that
// processors find each other even where the DHT cannot route between them
// (DHT clients behind NAT, a mesh of a few nodes). It stops adding
// connections once the host has ConnLow peers; unreachable peers back off.
func (n *Node) keepMeshed(ctx context.Context, every time.Duration) {
	defer n.wg.Done()
	backoffs := map[peer.ID]*p2p.Backoff{}
	changes := n.Store.Watch(ctx, records.NodesPrefix)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n.dialAdvertised(ctx, backoffs)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case _, ok := <-changes:
			if !ok {
				return
			}
		}
	}
}

func (n *Node) dialAdvertised(ctx context.Context, backoffs map[peer.ID]*p2p.Backoff) {
	ads, err := n.Processors(ctx)
	if err != nil {
		return
	}
	h := n.Host
	for _, ad := range ads {
		if len(h.Network().Peers()) >= n.Config.P2P.ConnLow {
			return
		}
		info, err := p2p.ParseAddrInfos(ad.Addrs)
		if err != nil || len(info) != 1 || info[0].ID == h.ID() {
			continue
		}
		id := info[0].ID
		if h.Network().Connectedness(id) == network.Connected {
			continue
		}
		b := backoffs[id]
		if b == nil {
			b = p2p.NewBackoff(time.Second, 5*time.Minute)
			backoffs[id] = b
		}
		now := time.Now()
		if !b.Ready(now) {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = h.Connect(dctx, info[0])
		cancel()
		if err != nil {
			b.Failed(now)
			n.Log.Debug("advertised processor unreachable", "peer", id, "retry_in", b.Delay(), "err", err)
			continue
		}
		b.Reset()
	}
}
