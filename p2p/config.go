package p2p

import (
	"errors"
	"fmt"
	"time"

	ma "github.com/multiformats/go-multiaddr"
)

// ProtocolPrefix is the prefix of every libp2p protocol jobmesh speaks. The
// DHT runs under it, so a jobmesh node never joins the public IPFS DHT.
const ProtocolPrefix = "/jobmesh"

// TopicPrefix is the prefix of every gossipsub topic; the number is the
// mesh layout version (Layout).
const TopicPrefix = "/jobmesh/" + layoutName + "/"

// DHT modes accepted by Config.DHTMode.
const (
	DHTModeServer = "server"
	DHTModeClient = "client"
	DHTModeAuto   = "auto"
)

// ErrInvalidConfig is wrapped by every Config validation error.
var ErrInvalidConfig = errors.New("p2p: invalid config")

// Config configures a Host. The zero value is not valid: start from
// DefaultConfig.
type Config struct {
	// ListenAddrs are the multiaddrs to listen on.
	// Default: /ip4/0.0.0.0/tcp/4001 and /ip4/0.0.0.0/udp/4001/quic-v1.
	ListenAddrs []string
	// AnnounceAddrs, when set, replace the addresses the host advertises.
	// Default: none (advertise the listen addresses).
	AnnounceAddrs []string
	// Bootstrap are full multiaddrs (with /p2p/<id>) of peers to keep
	// connected to. Default: none.
	Bootstrap []string
	// BootstrapInterval is how often the bootstrap peers are checked and
	// redialled. Default: 10s.
	BootstrapInterval time.Duration
	// BootstrapMaxBackoff caps the exponential backoff between dials of one
	// unreachable bootstrap peer. Default: 5m.
	BootstrapMaxBackoff time.Duration
	// DHTMode is "server", "client" or "auto". Default: "auto"; bootstrap
	// nodes use "server".
	DHTMode string
	// MDNS enables local-network discovery. Default: false.
	MDNS bool
	// PeerExchange makes gossipsub hand pruned peers a list of other peers;
	// bootstrap nodes turn it on. Default: false.
	PeerExchange bool
	// TopicDiscovery advertises joined topics on the DHT and looks for other
	// subscribers there. Default: true.
	TopicDiscovery bool
	// ConnLow and ConnHigh are the connection manager's watermarks.
	// Default: 100 and 400.
	ConnLow, ConnHigh int
	// ConnGrace is how long a new connection is safe from trimming.
	// Default: 1m.
	ConnGrace time.Duration
	// MaxMemory bounds the memory the resource manager lets libp2p use, in
	// bytes. Default: 512 MiB.
	MaxMemory int64
	// MaxFileDescriptors bounds the file descriptors libp2p may use.
	// Default: 1024.
	MaxFileDescriptors int
	// MaxMessageSize is the largest pubsub message accepted. Default: 1 MiB.
	MaxMessageSize int
	// OutboundQueueSize is the per-peer pubsub send queue; the library
	// default of 32 drops messages under bursts. Default: 1024.
	OutboundQueueSize int
	// ValidateQueueSize is the pubsub validation queue. Default: 1024.
	ValidateQueueSize int
	// MeshDegree is gossipsub's target mesh degree D: how many peers of a
	// topic each node forwards others' messages to (gossipsub's Dlo, Dhi,
	// Dscore and Dout follow from it; see gossipParams). Flood publishing
	// already sends a node's own messages to every peer of the topic it is
	// connected to, so the mesh mostly carries duplicates and repairs, and a
	// larger degree (the library's default is 6) mostly adds duplicates.
	// Default: 4; 2 to 12.
	MeshDegree int
	// DropInbound is a fault injection for tests: the fraction (0..1) of
	// pubsub messages received from other peers, on every topic, that this
	// node ignores, as if they were lost on the way (it neither delivers
	// nor forwards them). Default 0; never set in production.
	DropInbound float64
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		ListenAddrs:         []string{"/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"},
		BootstrapInterval:   10 * time.Second,
		BootstrapMaxBackoff: 5 * time.Minute,
		DHTMode:             DHTModeAuto,
		TopicDiscovery:      true,
		ConnLow:             100,
		ConnHigh:            400,
		ConnGrace:           time.Minute,
		MaxMemory:           512 << 20,
		MaxFileDescriptors:  1024,
		MaxMessageSize:      1 << 20,
		OutboundQueueSize:   1024,
		ValidateQueueSize:   1024,
		MeshDegree:          4,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	for _, a := range c.ListenAddrs {
		if _, err := ma.NewMultiaddr(a); err != nil {
			return bad("listen address %q: %v", a, err)
		}
	}
	for _, a := range c.AnnounceAddrs {
		if _, err := ma.NewMultiaddr(a); err != nil {
			return bad("announce address %q: %v", a, err)
		}
	}
	if _, err := ParseAddrInfos(c.Bootstrap); err != nil {
		return bad("bootstrap: %v", err)
	}
	switch c.DHTMode {
	case DHTModeServer, DHTModeClient, DHTModeAuto:
	default:
		return bad("dht mode %q: want server, client or auto", c.DHTMode)
	}
	switch {
	case c.BootstrapInterval <= 0:
		return bad("bootstrap interval must be positive")
	case c.BootstrapMaxBackoff < c.BootstrapInterval:
		return bad("bootstrap max backoff %s is below the interval %s", c.BootstrapMaxBackoff, c.BootstrapInterval)
	case c.ConnLow <= 0 || c.ConnHigh < c.ConnLow:
		return bad("connection watermarks low=%d high=%d", c.ConnLow, c.ConnHigh)
	case c.MaxMemory < 64<<20:
		return bad("max memory %d is below 64 MiB", c.MaxMemory)
	case c.MaxFileDescriptors < 64:
		return bad("max file descriptors %d is below 64", c.MaxFileDescriptors)
	case c.MaxMessageSize < 1024:
		return bad("max message size %d is below 1 KiB", c.MaxMessageSize)
	case c.DropInbound < 0 || c.DropInbound >= 1:
		return fmt.Errorf("%w: DropInbound %v out of [0, 1)", ErrInvalidConfig, c.DropInbound)
	case c.OutboundQueueSize < 32 || c.ValidateQueueSize < 32:
		return bad("queue sizes must be at least 32")
	case c.MeshDegree < 2 || c.MeshDegree > 12:
		return bad("mesh degree %d out of [2, 12]", c.MeshDegree)
	}
	return nil
}

// LoopbackConfig is DefaultConfig for a mesh on one machine: random TCP
// ports on 127.0.0.1, a DHT server on every node (so small meshes route
// without AutoNAT), and a fast bootstrap check. Tests and the demo use it.
// It listens on TCP only: with many nodes in one process, QUIC's per-packet
// work costs far more CPU per store write than TCP; real nodes keep both
// transports.
func LoopbackConfig() Config {
	c := DefaultConfig()
	c.ListenAddrs = []string{"/ip4/127.0.0.1/tcp/0"}
	c.DHTMode = DHTModeServer
	c.BootstrapInterval = 500 * time.Millisecond
	c.BootstrapMaxBackoff = 5 * time.Second
	c.ConnLow, c.ConnHigh = 200, 400
	return c
}
