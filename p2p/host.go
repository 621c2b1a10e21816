package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p"
	dht "github.com/libp2p/go-libp2p-kad-dht"
	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	swarm "github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	tls "github.com/libp2p/go-libp2p/p2p/security/tls"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
)

// Params are what New needs besides the Config.
type Params struct {
	Config Config
	// Identity is the node's key. Required unless Host is set.
	Identity crypto.PrivKey
	// Datastore keeps DHT records. Default: in memory.
	Datastore ds.Batching
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives libp2p's and this package's metrics. Nil disables
	// libp2p's metrics and keeps this package's unregistered.
	Registerer prometheus.Registerer
	// Host, when set, is used instead of building one from Config's
	// transports; tests pass a mocknet host here. Host closes it.
	Host host.Host
}

// Host is a libp2p host with the mesh's routing and pubsub attached.
type Host struct {
	host.Host
	// DHT is the private Kademlia DHT.
	DHT *dht.IpfsDHT
	// PubSub is the gossipsub router, with StrictSign.
	PubSub *pubsub.PubSub

	cfg       Config
	log       *slog.Logger
	metrics   *metrics
	bootstrap []peer.AddrInfo
	mdns      mdns.Service
	disc      *spacedDiscovery // nil without TopicDiscovery

	runCtx    context.Context // ends at Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New builds and starts a Host. ctx bounds only the start; Close releases
// everything New started, including the libp2p host.
func New(ctx context.Context, p Params) (*Host, error) {
	if err := p.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := p.Config
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("subsystem", "p2p")
	bootstrap, _ := ParseAddrInfos(cfg.Bootstrap) // validated above
	dstore := p.Datastore
	if dstore == nil {
		dstore = dssync.MutexWrap(ds.NewMapDatastore())
	}

	h := p.Host
	if h == nil {
		if p.Identity == nil {
			return nil, fmt.Errorf("%w: identity is required", ErrInvalidConfig)
		}
		var err error
		if h, err = newLibp2pHost(cfg, p.Identity, p.Registerer); err != nil {
			return nil, err
		}
	}

	met := newMetrics()
	kad, err := newDHT(h, cfg.DHTMode, dstore, bootstrap, met.dhtRequests)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("p2p: start dht: %w", err)
	}

	psOpts := []pubsub.Option{
		pubsub.WithMessageSignaturePolicy(pubsub.StrictSign),
		pubsub.WithFloodPublish(true),
		pubsub.WithGossipSubParams(gossipParams(cfg.MeshDegree)),
		pubsub.WithPeerExchange(cfg.PeerExchange),
		pubsub.WithPeerOutboundQueueSize(cfg.OutboundQueueSize),
		pubsub.WithValidateQueueSize(cfg.ValidateQueueSize),
		pubsub.WithMaxMessageSize(cfg.MaxMessageSize),
		pubsub.WithLogger(slog.New(quietHandler{log.With("subsystem", "pubsub").Handler(), slog.LevelError})),
	}
	var disc *spacedDiscovery
	if cfg.TopicDiscovery {
		disc = newSpacedDiscovery(drouting.NewRoutingDiscovery(kad), time.Now)
		psOpts = append(psOpts, pubsub.WithDiscovery(disc))
	}
	psOpts = append(psOpts, pubsub.WithRawTracer(newTrafficTracer(met.traffic)))
	if cfg.DropInbound > 0 {
		psOpts = append(psOpts, pubsub.WithDefaultValidator(dropInbound(h.ID(), cfg.DropInbound, met.faultDropped)))
	}
	// The router lives until Close, not until the caller's ctx ends.
	runCtx, cancel := context.WithCancel(context.Background())
	ps, err := pubsub.NewGossipSub(runCtx, h, psOpts...)
	if err != nil {
		cancel()
		kad.Close()
		h.Close()
		return nil, fmt.Errorf("p2p: start gossipsub: %w", err)
	}

	n := &Host{
		Host:      h,
		DHT:       kad,
		PubSub:    ps,
		cfg:       cfg,
		log:       log,
		metrics:   met,
		bootstrap: bootstrap,
		disc:      disc,
		runCtx:    runCtx,
		cancel:    cancel,
	}
	met.register(p.Registerer, cfg.DropInbound > 0)
	if err := n.refuseOtherLayouts(runCtx); err != nil {
		n.Close()
		return nil, err
	}
	if len(bootstrap) > 0 {
		n.wg.Add(1)
		go n.keepBootstrapped(runCtx)
	}
	if cfg.MDNS {
		n.mdns = mdns.NewMdnsService(h, "jobmesh", mdnsNotifee{n: n, ctx: runCtx})
		if err := n.mdns.Start(); err != nil {
			n.Close()
			return nil, fmt.Errorf("p2p: start mdns: %w", err)
		}
	}
	log.Info("host started", "peer", h.ID(), "addrs", h.Addrs(), "dht", cfg.DHTMode)
	return n, nil
}

// newDHT starts the Kademlia DHT of h under the private ProtocolPrefix;
// requests counts the requests it answers, by message type.
func newDHT(h host.Host, mode string, dstore ds.Batching, bootstrap []peer.AddrInfo, requests *prometheus.CounterVec) (*dht.IpfsDHT, error) {
	m := dht.ModeAuto
	switch mode {
	case DHTModeServer:
		m = dht.ModeServer
	case DHTModeClient:
		m = dht.ModeClient
	}
	return dht.New(h,
		dht.ProtocolPrefix(protocol.ID(ProtocolPrefix)),
		dht.Mode(m),
		dht.Datastore(dstore),
		dht.BootstrapPeers(bootstrap...),
		dht.OnRequestHook(func(_ context.Context, _ network.Stream, req *dhtpb.Message) {
			requests.WithLabelValues(dhtRequestType(req.GetType())).Inc()
		}),
	)
}

// NewConnManager builds the connection manager of cfg's watermarks and
// grace, the one every host of a node has.
func NewConnManager(cfg Config) (*connmgr.BasicConnMgr, error) {
	cm, err := connmgr.NewConnManager(cfg.ConnLow, cfg.ConnHigh, connmgr.WithGracePeriod(cfg.ConnGrace))
	if err != nil {
		return nil, fmt.Errorf("p2p: connection manager: %w", err)
	}
	return cm, nil
}

func newLibp2pHost(cfg Config, key crypto.PrivKey, reg prometheus.Registerer) (host.Host, error) {
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(resourceLimits(cfg)))
	if err != nil {
		return nil, fmt.Errorf("p2p: resource manager: %w", err)
	}
	cm, err := NewConnManager(cfg)
	if err != nil {
		return nil, err
	}
	opts := []libp2p.Option{
		libp2p.Identity(key),
		libp2p.ListenAddrStrings(cfg.ListenAddrs...),
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Transport(quic.NewTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Security(tls.ID, tls.New),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(rm),
		libp2p.ConnectionManager(cm),
		libp2p.UserAgent(AgentVersion),
	}
	if reg != nil {
		opts = append(opts, libp2p.PrometheusRegisterer(reg))
	} else {
		opts = append(opts, libp2p.DisableMetrics())
	}
	if len(cfg.AnnounceAddrs) > 0 {
		announce := make([]ma.Multiaddr, 0, len(cfg.AnnounceAddrs))
		for _, a := range cfg.AnnounceAddrs {
			announce = append(announce, ma.StringCast(a)) // validated
		}
		opts = append(opts, libp2p.AddrsFactory(func([]ma.Multiaddr) []ma.Multiaddr { return announce }))
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("p2p: start host: %w", err)
	}
	return h, nil
}

// FullAddrs returns the host's addresses with its /p2p/<id> suffix, sorted.
func (n *Host) FullAddrs() []ma.Multiaddr {
	info := peer.AddrInfo{ID: n.ID(), Addrs: n.Addrs()}
	addrs, _ := peer.AddrInfoToP2pAddrs(&info)
	slices.SortFunc(addrs, func(a, b ma.Multiaddr) int {
		return compareStrings(a.String(), b.String())
	})
	return addrs
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Connect dials a peer and protects the connection from trimming when the
// peer is a bootstrap peer.
func (n *Host) Connect(ctx context.Context, info peer.AddrInfo) error {
	if err := n.Host.Connect(ctx, info); err != nil {
		return fmt.Errorf("p2p: connect %s: %w", info.ID, err)
	}
	return nil
}

// Reach connects to peer id unless it is connected already, with the
// addresses the peerstore holds for it or, without any, those the DHT
// finds.
func (n *Host) Reach(ctx context.Context, id peer.ID) error {
	if id == n.ID() || n.Network().Connectedness(id) == network.Connected {
		return nil
	}
	info := peer.AddrInfo{ID: id, Addrs: n.Peerstore().Addrs(id)}
	if len(info.Addrs) == 0 {
		found, err := n.DHT.FindPeer(ctx, id)
		if err != nil {
			return fmt.Errorf("p2p: find %s: %w", id, err)
		}
		info = found
	}
	return n.Connect(ctx, info)
}

// Connected reports whether peer id is connected to this host.
func (n *Host) Connected(id peer.ID) bool {
	return n.Network().Connectedness(id) == network.Connected
}

// Peers returns the IDs of the connected peers, sorted.
func (n *Host) Peers() []peer.ID {
	ps := n.Network().Peers()
	slices.Sort(ps)
	return ps
}

// PauseTopicDiscovery keeps every topic off the DHT while paused is true:
// the caller knows the host is connected to every node that may share a
// topic with it. Without Config.TopicDiscovery it does nothing.
func (n *Host) PauseTopicDiscovery(paused bool) {
	if n.disc != nil {
		n.disc.paused.Store(paused)
	}
}

// TopicDiscoveryPaused reports whether PauseTopicDiscovery holds topics
// off the DHT now.
func (n *Host) TopicDiscoveryPaused() bool {
	return n.disc != nil && n.disc.paused.Load()
}

// Close stops discovery, pubsub's routing and the host. It is idempotent.
func (n *Host) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		if n.mdns != nil {
			n.mdns.Close()
		}
		n.wg.Wait()
		// libp2p's shutdown has no deadline of its own and was seen to
		// hang under heavy load; the node must still stop.
		done := make(chan error, 1)
		go func() { done <- errors.Join(n.DHT.Close(), n.Host.Close()) }()
		t := time.NewTimer(closeTimeout)
		defer t.Stop()
		select {
		case n.closeErr = <-done:
		case <-t.C:
			n.closeErr = fmt.Errorf("p2p: the host did not shut down within %s; left closing in the background", closeTimeout)
			n.log.Warn("host shutdown timed out", "after", closeTimeout)
		}
	})
	return n.closeErr
}

// closeTimeout bounds Close.
const closeTimeout = 15 * time.Second

// keepBootstrapped keeps a connection to every bootstrap peer, redialling an
// unreachable one with exponential backoff, and refreshes the DHT once the
// first connection is up.
func (n *Host) keepBootstrapped(ctx context.Context) {
	defer n.wg.Done()
	backoffs := make(map[peer.ID]*Backoff, len(n.bootstrap))
	for _, info := range n.bootstrap {
		n.Peerstore().AddAddrs(info.ID, info.Addrs, time.Hour*24*365)
		n.ConnManager().Protect(info.ID, "bootstrap")
		backoffs[info.ID] = NewBackoff(time.Second, n.cfg.BootstrapMaxBackoff)
	}
	refreshed := false
	ticker := time.NewTicker(n.cfg.BootstrapInterval)
	defer ticker.Stop()
	for {
		now := time.Now()
		for _, info := range n.bootstrap {
			if info.ID == n.ID() || n.Network().Connectedness(info.ID) == network.Connected {
				backoffs[info.ID].Reset()
				continue
			}
			b := backoffs[info.ID]
			if !b.Ready(now) {
				continue
			}
			// Our backoff paces these dials; the swarm's own, which grows
			// with every failure and outlasts ours, would refuse them.
			if sw, ok := n.Network().(*swarm.Swarm); ok {
				sw.Backoff().Clear(info.ID)
			}
			dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err := n.Host.Connect(dctx, info)
			cancel()
			if err != nil {
				b.Failed(now)
				n.metrics.bootstrapDials.WithLabelValues("error").Inc()
				n.log.Warn("bootstrap peer unreachable", "peer", info.ID, "retry_in", b.Delay(), "err", err)
				continue
			}
			b.Reset()
			n.metrics.bootstrapDials.WithLabelValues("ok").Inc()
			n.log.Info("connected to bootstrap peer", "peer", info.ID)
			if !refreshed {
				refreshed = true
				if err := n.DHT.Bootstrap(ctx); err != nil {
					n.log.Warn("dht bootstrap", "err", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

type mdnsNotifee struct {
	n   *Host
	ctx context.Context
}

func (m mdnsNotifee) HandlePeerFound(info peer.AddrInfo) {
	if info.ID == m.n.ID() {
		return
	}
	ctx, cancel := context.WithTimeout(m.ctx, 10*time.Second)
	defer cancel()
	if err := m.n.Host.Connect(ctx, info); err != nil {
		m.n.log.Debug("mdns peer unreachable", "peer", info.ID, "err", err)
	}
}

// dropInbound is the DropInbound fault: a validator that ignores the given
// fraction of the messages other peers send.
func dropInbound(self peer.ID, fraction float64, dropped prometheus.Counter) pubsub.ValidatorEx {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	return func(_ context.Context, from peer.ID, _ *pubsub.Message) pubsub.ValidationResult {
		if from == self {
			return pubsub.ValidationAccept
		}
		mu.Lock()
		drop := rng.Float64() < fraction
		mu.Unlock()
		if drop {
			dropped.Inc()
			return pubsub.ValidationIgnore
		}
		return pubsub.ValidationAccept
	}
}

// gossipParams are gossipsub's defaults with the mesh sized around degree
// d (Config.MeshDegree): the bounds keep the library's proportions (at
// d = 6 they are its defaults: Dlo 5, Dhi 12, Dscore 4, Dout 2) and its
// rules (Dout below Dlo and below d/2, Dscore at most Dhi).
func gossipParams(d int) pubsub.GossipSubParams {
	gp := pubsub.DefaultGossipSubParams()
	gp.D = d
	gp.Dlo = d - 1
	gp.Dhi = 2 * d
	gp.Dscore = 2 * d / 3
	gp.Dout = d/2 - 1
	return gp
}
