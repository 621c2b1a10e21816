package p2p

import (
	"github.com/libp2p/go-libp2p"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
)

// resourceLimits returns the resource manager's limits: libp2p's defaults
// scaled to MaxMemory and MaxFileDescriptors, with room for twice ConnHigh
// connections in the system scope. The connection manager closes
// connections only above ConnHigh; if the resource manager refused new ones
// first (about 96 inbound at 512 MiB), a busy node, such as the bootstrap
// node of a mesh of a hundred processors, would turn every newcomer away
// while it keeps its old peers, and the newcomer would have no peer at all.
// Memory, file descriptors and the transient scope (connections still
// handshaking) keep their scaled limits.
func resourceLimits(cfg Config) rcmgr.ConcreteLimitConfig {
	scaling := rcmgr.DefaultLimits
	libp2p.SetDefaultServiceLimits(&scaling)
	limits := scaling.Scale(cfg.MaxMemory, cfg.MaxFileDescriptors).ToPartialLimitConfig()
	sys := &limits.System
	want := rcmgr.LimitVal(2 * cfg.ConnHigh)
	if sys.ConnsInbound > 0 && sys.ConnsInbound < want {
		// Inbound streams grow with inbound connections, at the defaults'
		// ratio of streams to connections.
		sys.StreamsInbound = sys.StreamsInbound / sys.ConnsInbound * want
		sys.ConnsInbound = want
	}
	if sys.Conns > 0 && sys.Conns < want {
		sys.Streams = sys.Streams / sys.Conns * want
		sys.Conns = want
	}
	return limits.Build(rcmgr.ConcreteLimitConfig{})
}
