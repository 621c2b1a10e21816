package node

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/namespace"
	dsq "github.com/ipfs/go-datastore/query"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/logring"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/models"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// Version is the node software version advertised to peers.
const Version = "0.1.0"

// earningsEvery is how often a node reads its wallet's earnings from the
// chain for its metrics and the operator view.
const earningsEvery = 30 * time.Second

// Role is what a node does in the mesh.
type Role string

// Roles. A bootstrap node is a DHT server with gossipsub peer exchange; a
// processor advertises itself and takes work; a client submits jobs.
const (
	RoleBootstrap Role = "bootstrap"
	RoleProcessor Role = "processor"
	RoleClient    Role = "client"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool {
	return r == RoleBootstrap || r == RoleProcessor || r == RoleClient
}

// Params are what New needs.
type Params struct {
	Role   Role
	Config Config
	// Identity is the node's libp2p key. Required unless Host is set.
	Identity crypto.PrivKey
	// Datastore holds blocks, the replicated store and DHT records under
	// separate prefixes. Required; the node does not close it.
	Datastore ds.Batching
	// P2P, when set, replaces the p2p configuration derived from Config
	// (tests and the demo use p2p.LoopbackConfig).
	P2P *p2p.Config
	// Host, when set, is used instead of building one (mocknet tests).
	Host host.Host
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registry collects the node's metrics. Default: a new registry.
	Registry *prometheus.Registry
	// Processor, when set, replaces the processor settings derived from
	// Config (tests shorten timeouts and inject faults through it).
	Processor *processor.Config
	// Chain, when set, is the chain the node settles on; it replaces the
	// [chain] section. Default nil: the [chain] section decides.
	Chain *Chain
	// WalletKey is the node's wallet (the repo's wallet.key): it pays gas,
	// funds jobs and signs settlements. Required with a chain.
	WalletKey *ecdsa.PrivateKey
}

// Node is one jobmesh node: its host, block layer and replicated store.
type Node struct {
	Role   Role
	Config Config
	Host   *p2p.Host
	IPFS   *ipfs.Node
	// Store is the replicated store the node's parts read and write.
	Store   crdt.Replicated
	Metrics *prometheus.Registry
	Log     *slog.Logger
	// Worker runs MicroJobs; set on processors.
	Worker *processor.Worker
	// DApp submits jobs; set on clients and processors.
	DApp *dapp.Client
	// Escrow is the node's escrow client; nil without a chain.
	Escrow *escrow.Client
	// Earnings watches the wallet's credit and withdrawals on the escrow;
	// nil without a chain.
	Earnings *escrow.EarningsWatch
	// warnings keeps the latest WARN and ERROR records of Log (operator.go).
	warnings *logring.Ring
	// Models is a processor's model store; nil on other roles and when
	// [processor] model_dir is empty.
	Models *models.Store
	// models pre-downloads into Models; nil with it.
	models *models.Fetcher
	// walletKey is Params.WalletKey: a processor binds its peer ID to it.
	walletKey *ecdsa.PrivateKey
	// bindings caches the verified wallet bindings Processors reads.
	bindings bindingCache
	// rules are how this node judges jobs it reads with a chain
	// (membership.ReaderRules, its caches kept across reads); zero
	// without one.
	rules finish.Rules
	// facts is the dispatch view's reader on a node without a worker
	// (DispatchView), kept so that what it derived of finished and
	// settled jobs is derived once; made on first use.
	factsMu sync.Mutex
	facts   *meshview.Facts

	// mesh is the mesh's replicated store, which Close closes.
	mesh *crdt.Store
	// jobStores and router are the per-job stores and the router over
	// them and mesh ([store] job_stores); nil without.
	jobStores *jobstore.Manager
	router    *jobstore.Router

	closeChain func() // closes a chain connection New dialled
	started    time.Time
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// MeshStore is the mesh's replicated store itself (its heads, its DAG).
func (n *Node) MeshStore() *crdt.Store { return n.mesh }

// New starts a node. Close stops everything New started; the datastore
// stays open for its owner.
func New(ctx context.Context, p Params) (_ *Node, err error) {
	if !p.Role.Valid() {
		return nil, fmt.Errorf("%w: unknown role %q", ErrInvalidConfig, p.Role)
	}
	if err := p.Config.Validate(); err != nil {
		return nil, err
	}
	if p.Datastore == nil {
		return nil, fmt.Errorf("%w: datastore is required", ErrInvalidConfig)
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	log, warnings := keepWarnings(log)
	reg := p.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}

	var closers []func() error
	defer func() {
		if err != nil {
			for i := len(closers) - 1; i >= 0; i-- {
				_ = closers[i]()
			}
		}
	}()

	h, blocks, store, fill, err := p.openLayers(ctx, log, reg, &closers)
	if err != nil {
		return nil, err
	}

	var (
		esc *escrow.Client
		n   *Node
	)
	if p.Role != RoleBootstrap {
		c, closeChain, err := escrowClient(ctx, p, log, reg)
		if err != nil {
			return nil, err
		}
		if c != nil {
			esc = c
			closers = append(closers, func() error { closeChain(); return nil })
			defer func() {
				if err == nil {
					n.closeChain = closeChain
				}
			}()
		}
	}

	runCtx, cancel := context.WithCancel(context.Background())
	n = &Node{
		Escrow:   esc,
		Role:     p.Role,
		Config:   p.Config,
		Host:     h,
		IPFS:     blocks,
		Store:    store,
		mesh:     store,
		Metrics:  reg,
		Log:      log.With("role", string(p.Role)),
		warnings: warnings,
		started:  time.Now(),
		cancel:   cancel,
	}
	if p.Config.Store.JobStores.On(esc != nil) {
		if err := n.openJobStores(ctx, runCtx, p.storeConfig(h, blocks, fill, log, nil)); err != nil {
			cancel()
			return nil, err
		}
		closers = append(closers, n.jobStores.Close)
	}
	// The stores' DAGs share the blockstore: the GC keeps every delta they
	// have merged.
	blocks.StartGC(n.merged)
	if esc != nil {
		n.rules = membership.ReaderRules(n.Store, membership.NewMembers(esc, 0), membership.NewStakers(esc))
	}
	n.walletKey = p.WalletKey
	n.wg.Add(2)
	go n.keepMeshed(runCtx, 5*time.Second)
	go n.keepPins(runCtx)
	closers = append(closers, func() error { cancel(); n.wg.Wait(); return nil })
	if esc != nil {
		if n.Earnings, err = escrow.NewEarningsWatch(esc, esc.From(), reg); err != nil {
			return nil, err
		}
		n.wg.Go(func() { n.Earnings.Run(runCtx, earningsEvery) })
	}
	if p.Role == RoleProcessor {
		if err := n.startProcessor(ctx, runCtx, p, log, &closers); err != nil {
			return nil, err
		}
	}
	if p.Role != RoleBootstrap {
		// Every client and processor can submit jobs.
		c, err := n.newDApp(p, log, reg)
		if err != nil {
			return nil, err
		}
		n.DApp = c
		closers = append(closers, c.Close)
	}
	n.Log.Info("node started", "peer", h.ID())
	return n, nil
}

// openLayers starts the host, the block layer on it and the replicated
// store on both, adding each to closers.
func (p Params) openLayers(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, closers *[]func() error) (*p2p.Host, *ipfs.Node, *crdt.Store, *crdt.Backfill, error) {
	h, err := p2p.New(ctx, p2p.Params{
		Config:     p.p2pConfig(),
		Identity:   p.Identity,
		Datastore:  namespace.Wrap(p.Datastore, ds.NewKey("/dht")),
		Logger:     log,
		Registerer: reg,
		Host:       p.Host,
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	*closers = append(*closers, h.Close)

	blocks, err := ipfs.New(ctx, ipfs.Params{
		Config:     p.Config.ipfsConfig(),
		Host:       h,
		Routing:    h.DHT,
		Datastore:  namespace.Wrap(p.Datastore, ds.NewKey("/blocks")),
		Logger:     log,
		Registerer: reg,
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	*closers = append(*closers, blocks.Close)

	fill, err := crdt.NewBackfill(h, log, reg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	*closers = append(*closers, func() error { fill.Close(); return nil })
	store, err := crdt.New(ctx, p.storeConfig(h, blocks, fill, log, reg))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	*closers = append(*closers, store.Close)
	warnOldLayout(ctx, p.Datastore, log)
	return h, blocks, store, fill, nil
}

// oldLayoutNamespace is where a layout 1 node kept its store.
const oldLayoutNamespace = "/crdt/jobmesh/v1"

// warnOldLayout says when the repo still holds the store of mesh layout
// 1, which this node neither reads nor deletes (the node that wrote it
// can still read it; its blocks go with the block layer's GC).
func warnOldLayout(ctx context.Context, d ds.Datastore, log *slog.Logger) {
	res, err := d.Query(ctx, dsq.Query{Prefix: oldLayoutNamespace, KeysOnly: true, Limit: 1})
	if err != nil {
		return
	}
	if rest, _ := res.Rest(); len(rest) > 0 {
		log.Warn("this repo holds a store of mesh layout 1, which this node does not read: it joins a layout "+
			strconv.Itoa(p2p.Layout)+" mesh afresh (settlements stay on the chain, outputs in the block layer)",
			"namespace", oldLayoutNamespace)
	}
}

// p2pConfig is the host's configuration: Params.P2P when set, with the
// bootstrap role's DHT server and peer exchange, else the [p2p] section's.
func (p Params) p2pConfig() p2p.Config {
	if p.P2P == nil {
		return p.Config.p2pConfig(p.Role)
	}
	pcfg := *p.P2P
	if p.Role == RoleBootstrap {
		pcfg.DHTMode, pcfg.PeerExchange = p2p.DHTModeServer, true
	}
	return pcfg
}

// storeConfig is the replicated store's configuration from the [store]
// section, over host h and block layer blocks, backfilled through fill.
func (p Params) storeConfig(h *p2p.Host, blocks *ipfs.Node, fill *crdt.Backfill, log *slog.Logger, reg prometheus.Registerer) crdt.Config {
	key := p.Identity
	if key == nil {
		key = h.Peerstore().PrivKey(h.ID())
	}
	scfg := crdt.DefaultConfig()
	scfg.Datastore = namespace.Wrap(p.Datastore, ds.NewKey("/crdt"))
	// The store's blocks are never provided on the DHT.
	scfg.DAGService = blocks.UnprovidedDAG()
	scfg.LocalBlocks = blocks
	scfg.Backfill = fill
	scfg.PubSub = h.PubSub
	scfg.PrivKey = key
	scfg.Logger = log
	scfg.Registerer = reg
	scfg.RebroadcastInterval = time.Duration(p.Config.Store.Rebroadcast)
	scfg.FloodPublish = true // the host's gossipsub floods its own messages (p2p)
	scfg.MaxPayload = p.Config.Store.MaxPayload
	scfg.DAGSyncTimeout = time.Duration(p.Config.Store.DAGSyncTimeout)
	scfg.AnnounceWait = time.Duration(p.Config.Store.AnnounceWait)
	scfg.RepairInterval = time.Duration(p.Config.Store.RepairInterval)
	scfg.AuthorPolicy = records.AuthorPolicy()
	return scfg
}

// startProcessor binds the wallet, starts the worker and the model store,
// and advertises the processor; runCtx bounds the loops it starts. It adds
// what it opened to closers.
func (n *Node) startProcessor(ctx, runCtx context.Context, p Params, log *slog.Logger, closers *[]func() error) error {
	pc := p.Config.ProcessorConfig()
	if p.Processor != nil {
		pc = *p.Processor
	}
	// Bound before any result record names the wallet.
	if err := n.BindWallet(ctx); err != nil {
		return err
	}
	w, err := processor.New(ctx, processor.Params{Host: n.Host, Blocks: n.IPFS, Store: n.Store, Jobs: n.joiner(), Rooms: n.rooms(), Logger: log, Registerer: n.Metrics, Chain: n.Escrow, WalletKey: p.WalletKey, Directory: directory{n}}, pc)
	if err != nil {
		return err
	}
	n.Worker = w
	*closers = append(*closers, w.Close)
	if err := n.startModels(runCtx, p.Config, pc, log, n.Metrics); err != nil {
		return err
	}
	if err := n.Advertise(ctx); err != nil {
		return err
	}
	n.wg.Add(1)
	go n.keepAdvertising(runCtx)
	return nil
}

// Close stops the node's loops, then the store, the block layer and the
// host, in that order. It is idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		var errs []error
		// The DApp first: on a processor it announces on the worker's
		// channel.
		if n.DApp != nil {
			errs = append(errs, n.DApp.Close())
		}
		if n.Worker != nil {
			errs = append(errs, n.Worker.Close())
		}
		n.cancel()
		n.wg.Wait()
		if n.jobStores != nil {
			errs = append(errs, n.jobStores.Close())
		}
		errs = append(errs, n.mesh.Close(), n.IPFS.Close(), n.Host.Close())
		if n.closeChain != nil {
			n.closeChain()
		}
		n.closeErr = errors.Join(errs...)
		n.Log.Info("node stopped")
	})
	return n.closeErr
}

// LocalPrefix is the datastore prefix of the node's own, non-replicated
// records (beside /dht, /blocks and /crdt).
const LocalPrefix = "/local"

// newDApp builds the node's DApp client. On a processor it announces
// through the worker's Jobs channel, which the worker already answers
// queries on.
func (n *Node) newDApp(p Params, log *slog.Logger, reg prometheus.Registerer) (*dapp.Client, error) {
	pc := p.Config.ProcessorConfig()
	if p.Processor != nil {
		pc = *p.Processor
	}
	fcfg := pc.Fetch
	fcfg.IPFS = n.IPFS
	fcfg.Logger = log.With("subsystem", "dapp-fetch")
	fetcher, err := fetch.New(fcfg)
	if err != nil {
		return nil, err
	}
	dp := dapp.Params{
		Host: n.Host, Blocks: n.IPFS, Store: n.Store, Jobs: n.joiner(), Logger: log, Chain: n.Escrow, Terms: p.Config.Client.Terms(),
		Local:       namespace.Wrap(p.Datastore, ds.NewKey(LocalPrefix+"/dapp")),
		Fetch:       fetcher,
		MaxCodeSize: pc.MaxCodeSize, MaxDataSize: pc.MaxDataSize,
		WalletKey:   p.WalletKey,
		Registerer:  reg,
		FailReports: pc.Dispatch.FailReports,
	}
	if n.Worker != nil {
		dp.Channel = n.Worker.Channel()
	}
	return dapp.New(dp)
}
