package p2p

import (
	"context"
	"fmt"
	"strings"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Layout is the mesh layout version: the store namespaces, the topics and
// the record layout a node speaks. Nodes of different layouts cannot share
// a mesh: each refuses the other's connections, so neither reads records
// of a layout it does not know.
const Layout = 2

const layoutName = "2"

// AgentVersion is what a node tells its peers through identify: the mesh
// layout it speaks.
const AgentVersion = "jobmesh/" + layoutName

// OtherLayout reports whether an identify agent version names a jobmesh
// layout other than this node's. Agents that are not jobmesh nodes (an
// IPFS client fetching an output) are not refused.
func OtherLayout(agent string) bool {
	return strings.HasPrefix(agent, "jobmesh/") && agent != AgentVersion
}

// refuseOtherLayouts closes every connection to a peer that identifies as
// a jobmesh node of another layout, counts it and warns once per peer.
func (n *Host) refuseOtherLayouts(ctx context.Context) error {
	sub, err := n.EventBus().Subscribe(new(event.EvtPeerIdentificationCompleted))
	if err != nil {
		return fmt.Errorf("p2p: watch identify: %w", err)
	}
	n.wg.Go(func() {
		defer sub.Close()
		warned := make(map[peer.ID]bool)
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-sub.Out():
				if !ok {
					return
				}
				id := e.(event.EvtPeerIdentificationCompleted)
				if !OtherLayout(id.AgentVersion) {
					continue
				}
				n.metrics.refused.WithLabelValues("layout").Inc()
				if !warned[id.Peer] {
					if len(warned) >= maxWarnedPeers {
						clear(warned)
					}
					warned[id.Peer] = true
					n.log.Warn("refusing a peer of another mesh layout: upgrade every node of a mesh together",
						"peer", id.Peer, "peer_agent", id.AgentVersion, "agent", AgentVersion)
				}
				_ = n.Network().ClosePeer(id.Peer)
			}
		}
	})
	return nil
}

// maxWarnedPeers bounds the peers a node remembers having warned about.
const maxWarnedPeers = 1024
