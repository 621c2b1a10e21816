// Package localmesh runs a whole jobmesh mesh inside one process: a
// bootstrap node and processors, each with its own repo on disk, on
// 127.0.0.1 sockets or on a libp2p mock network. The demo runs on it, and
// so do the tests that need a mesh (meshtest wraps it for them).
package localmesh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	dsq "github.com/ipfs/go-datastore/query"
	pebbleds "github.com/ipfs/go-ds-pebble"
	coreconnmgr "github.com/libp2p/go-libp2p/core/connmgr"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

// Options configure a mesh.
type Options struct {
	// Processors is the number of processor nodes. Default: 3.
	Processors int
	// Clients is the number of client (DApp) nodes. Default: 0.
	Clients int
	// Dir holds one repo per member. Required.
	Dir string
	// Mocknet, when set, puts every host on this mock network (linked to
	// every other) instead of real sockets, so that tests can cut links.
	Mocknet mocknet.Mocknet
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Configure, when set, adjusts each member's config before its repo is
	// created.
	Configure func(m *Member, cfg *node.Config)
	// P2P, when set, adjusts each member's host settings (loopback TCP by
	// default) at every start; tests inject message loss through it.
	P2P func(m *Member, cfg *p2p.Config)
	// Timers shortens, where a field is set, that timer of every
	// processor at every start, before Processor runs: tests that only
	// hurry a mesh need not name the processor's settings.
	Timers Timers
	// Processor, when set, adjusts each processor's settings at every start
	// (tests shorten timeouts and inject faults through it).
	Processor func(m *Member, pc *processor.Config)
	// Chain, when set, starts an embedded chain (escrow.NewSimChain) with
	// the escrow deployed from dev account 0: every member's wallet is
	// funded from dev account 1, every processor stakes the minimum stake,
	// members settle and fund jobs on it, and an empty block is sealed
	// every ChainOptions.BlockEvery. Default nil: no chain.
	Chain *ChainOptions
}

// Timers are the processor timers tests shorten; a zero field keeps the
// member's setting.
type Timers struct {
	Poll          time.Duration // processor.Config.Poll
	DiscloseGrace time.Duration // processor.Config.DiscloseGrace
	HoldWait      time.Duration // processor.Config.HoldWait
	FactsEvery    time.Duration // processor.Config.FactsEvery
}

func (t Timers) apply(pc *processor.Config) {
	for _, f := range []struct {
		to *time.Duration
		v  time.Duration
	}{{&pc.Poll, t.Poll}, {&pc.DiscloseGrace, t.DiscloseGrace}, {&pc.HoldWait, t.HoldWait}, {&pc.FactsEvery, t.FactsEvery}} {
		if f.v > 0 {
			*f.to = f.v
		}
	}
}

// ChainOptions configure the embedded chain.
type ChainOptions struct {
	// Deploy are the escrow's parameters. Default escrow.DefaultDeployParams().
	Deploy escrow.DeployParams
	// Funding is what each member's wallet receives, in wei. Default 100
	// ether.
	Funding *big.Int
	// Terms are the escrow terms every member's [client] section starts
	// with (Options.Configure may change them). Default DefaultTerms.
	Terms escrow.Terms
	// BlockEvery is how often an empty block is sealed at the later of
	// the wall clock and a second after the head, so that the chain's
	// clock moves without transactions, as a live chain's does: the quiet
	// period of a job ends though nobody sends anything. Default 1s.
	BlockEvery time.Duration
}

// DefaultTerms are the escrow terms of a local mesh's jobs: a quiet
// period of 2s (its processors join within a second of a job's
// announcement) and 2 signers, so that jobs settle in seconds under the
// rules a real mesh runs by.
func DefaultTerms() escrow.Terms { return escrow.Terms{Quiet: 2 * time.Second, MinSigners: 2} }

// Member is one node of the mesh. Node is nil while the member is stopped.
type Member struct {
	Index int
	Role  node.Role
	Dir   string
	*node.Node

	// Wallet is the member's wallet address (its repo's wallet.key).
	Wallet common.Address

	repo   *node.Repo
	ds     *pebbleds.Datastore
	funded bool
	staked bool
}

// Mesh is a running in-process mesh. Members[0] is the bootstrap node.
type Mesh struct {
	// Chain is the embedded chain; nil without Options.Chain.
	Chain *escrow.SimChain
	// Escrow is a client of the deployed escrow signing with dev account
	// 0; nil without a chain.
	Escrow *escrow.Client

	opts      Options
	mu        sync.Mutex
	Members   []*Member
	bootstrap []string
	minStake  *big.Int
	// stopBlocks ends the chain's block heartbeat; blocksDone is closed
	// when it has.
	stopBlocks context.CancelFunc
	blocksDone chan struct{}
}

// Start creates the repos and starts every member.
func Start(ctx context.Context, opts Options) (_ *Mesh, err error) {
	if opts.Dir == "" {
		return nil, errors.New("localmesh: Dir is required")
	}
	if opts.Processors == 0 {
		opts.Processors = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Mesh{opts: opts}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	if opts.Chain != nil {
		if err := m.startChain(ctx); err != nil {
			return nil, err
		}
	}
	roles := []node.Role{node.RoleBootstrap}
	for range opts.Processors {
		roles = append(roles, node.RoleProcessor)
	}
	for range opts.Clients {
		roles = append(roles, node.RoleClient)
	}
	for _, role := range roles {
		if _, err := m.add(ctx, role); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Add starts a new member of role with a fresh repo, configured as the
// others (Options.Configure, Options.Processor): a node that joins the
// mesh late, knowing nothing of it but the bootstrap node.
func (m *Mesh) Add(ctx context.Context, role node.Role) (*Member, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.add(ctx, role)
}

func (m *Mesh) add(ctx context.Context, role node.Role) (*Member, error) {
	i := len(m.Members)
	mem := &Member{Index: i, Role: role, Dir: filepath.Join(m.opts.Dir, fmt.Sprintf("%s-%d", role, i))}
	cfg := node.DefaultConfig()
	FastStore(&cfg)
	cfg.Processor.AdvertiseEvery = node.Duration(time.Minute)
	if m.opts.Chain != nil {
		t := m.opts.Chain.Terms
		cfg.Client = node.ClientConfig{Quiet: node.Duration(t.Quiet), MinSigners: t.MinSigners}
	}
	if m.opts.Configure != nil {
		m.opts.Configure(mem, &cfg)
	}
	if err := node.InitRepo(mem.Dir, cfg); err != nil {
		return nil, err
	}
	m.Members = append(m.Members, mem)
	if err := m.start(ctx, mem); err != nil {
		return nil, err
	}
	if i == 0 {
		for _, a := range mem.Host.FullAddrs() {
			m.bootstrap = append(m.bootstrap, a.String())
		}
	}
	return mem, nil
}

// MemberLabel is the pprof label that every goroutine a member starts
// carries, its value the member's index: a CPU profile of the process
// splits the mesh's CPU by member (cpuprof.Profile).
const MemberLabel = "member"

func (m *Mesh) start(ctx context.Context, mem *Member) (err error) {
	pprof.Do(ctx, pprof.Labels(MemberLabel, strconv.Itoa(mem.Index)), func(ctx context.Context) {
		err = m.startMember(ctx, mem)
	})
	return err
}

func (m *Mesh) startMember(ctx context.Context, mem *Member) (err error) {
	repo, err := node.OpenRepo(mem.Dir)
	if err != nil {
		return err
	}
	dstore, err := repo.OpenDatastore()
	if err != nil {
		repo.Close()
		return err
	}
	defer func() {
		if err != nil {
			dstore.Close()
			repo.Close()
		}
	}()
	pcfg := p2p.LoopbackConfig()
	pcfg.Bootstrap = m.bootstrap
	if m.opts.P2P != nil {
		m.opts.P2P(mem, &pcfg)
	}
	params := node.Params{
		Role:      mem.Role,
		Config:    repo.Config,
		Identity:  repo.Identity,
		Datastore: dstore,
		P2P:       &pcfg,
		Logger:    m.opts.Logger.With("node", mem.Index),
	}
	if mem.Role != node.RoleBootstrap && repo.WalletKey != nil {
		// As the daemon does: the wallet is the default creator of the
		// member's jobs and what a processor binds its peer ID to.
		mem.Wallet = ethcrypto.PubkeyToAddress(repo.WalletKey.PublicKey)
		params.WalletKey = repo.WalletKey
	}
	if m.Chain != nil && mem.Role != node.RoleBootstrap {
		if repo.WalletKey == nil {
			return fmt.Errorf("localmesh: member %d has no wallet key", mem.Index)
		}
		params.Chain = &node.Chain{Backend: m.Chain.Client(), Contract: m.Escrow.Address()}
		if !mem.funded {
			if err := m.fund(ctx, mem.Wallet); err != nil {
				return err
			}
			mem.funded = true
		}
	}
	if mem.Role == node.RoleProcessor && (m.opts.Processor != nil || m.opts.Timers != Timers{}) {
		pc := repo.Config.ProcessorConfig()
		m.opts.Timers.apply(&pc)
		if m.opts.Processor != nil {
			m.opts.Processor(mem, &pc)
		}
		params.Processor = &pc
	}
	if mn := m.opts.Mocknet; mn != nil {
		addr := ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 10000+mem.Index))
		if err := relink(mn, repo.Identity, addr, pcfg, &params); err != nil {
			return err
		}
		h := params.Host
		bs, _ := p2p.ParseAddrInfos(m.bootstrap)
		for _, b := range bs {
			h.Peerstore().AddAddrs(b.ID, b.Addrs, time.Hour)
		}
	}
	n, err := node.New(ctx, params)
	if err != nil {
		return err
	}
	mem.Node, mem.repo, mem.ds = n, repo, dstore
	if m.Chain != nil && mem.Role == node.RoleProcessor && !mem.staked {
		if _, err := n.Escrow.Stake(ctx, m.minStake); err != nil {
			return fmt.Errorf("localmesh: staking member %d: %w", mem.Index, err)
		}
		mem.staked = true
	}
	return nil
}

// relink puts a member's new host on the mock network, linked to every
// other host, with a connection manager of pcfg's watermarks, and sets it
// in params. The links of a member's earlier host (one restarted) lead to
// its closed network, and a dial takes any link between two peers: they
// go first.
func relink(mn mocknet.Mocknet, key crypto.PrivKey, addr ma.Multiaddr, pcfg p2p.Config, params *node.Params) error {
	self, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return fmt.Errorf("localmesh: mock host: %w", err)
	}
	if err := unlinkAll(mn, self); err != nil {
		return err
	}
	h, err := mn.AddPeer(key, addr)
	if err != nil {
		return fmt.Errorf("localmesh: mock host: %w", err)
	}
	for _, p := range mn.Peers() {
		if p == self {
			continue
		}
		if _, err := mn.LinkPeers(self, p); err != nil {
			return fmt.Errorf("localmesh: link: %w", err)
		}
	}
	cm, err := p2p.NewConnManager(pcfg)
	if err != nil {
		h.Close()
		return fmt.Errorf("localmesh: %w", err)
	}
	h.Network().Notify(cm.Notifee())
	params.Host = &managedHost{Host: h, cm: cm}
	return nil
}

// managedHost is a mock host with a connection manager: the mock
// network's hosts have none, so nothing would trim their connections or
// keep the tags and protections that gossipsub and the DHT set, as a
// socket host's does.
type managedHost struct {
	host.Host
	cm *connmgr.BasicConnMgr
}

func (h *managedHost) ConnManager() coreconnmgr.ConnManager { return h.cm }

func (h *managedHost) Close() error {
	return errors.Join(h.cm.Close(), h.Host.Close())
}

// unlinkAll removes every mock link of peer p: a stopped member's mock
// network would still accept connections on them.
func unlinkAll(mn mocknet.Mocknet, p peer.ID) error {
	for _, q := range mn.Peers() {
		for _, l := range mn.LinksBetweenPeers(p, q) {
			if err := mn.Unlink(l); err != nil {
				return fmt.Errorf("localmesh: unlink: %w", err)
			}
		}
	}
	return nil
}

// startChain starts the embedded chain and deploys the escrow.
func (m *Mesh) startChain(ctx context.Context) error {
	co := *m.opts.Chain
	if co.Deploy.MinStake == nil {
		co.Deploy = escrow.DefaultDeployParams()
	}
	if co.Funding == nil {
		co.Funding = new(big.Int).Mul(big.NewInt(100), big.NewInt(params.Ether))
	}
	if co.Terms == (escrow.Terms{}) {
		co.Terms = DefaultTerms()
	}
	if err := co.Terms.Validate(); err != nil {
		return fmt.Errorf("localmesh: %w", err)
	}
	if co.BlockEvery <= 0 {
		co.BlockEvery = time.Second
	}
	m.opts.Chain = &co
	sim, err := escrow.NewSimChain(escrow.DefaultDevChainConfig())
	if err != nil {
		return err
	}
	m.Chain = sim
	c, _, err := escrow.Deploy(ctx, sim.Client(), sim.Transactor(0), co.Deploy, escrow.DefaultConfig())
	if err != nil {
		return fmt.Errorf("localmesh: deploying the escrow: %w", err)
	}
	m.Escrow = c
	m.minStake = co.Deploy.MinStake
	bctx, stop := context.WithCancel(context.Background())
	m.stopBlocks, m.blocksDone = stop, make(chan struct{})
	go m.sealBlocks(bctx, sim, co.BlockEvery)
	return nil
}

// sealBlocks seals an empty block every period, at the later of the wall
// clock and one second after the head, until ctx ends. The simulated
// chain seals blocks only for transactions, so without it the chain's
// clock stands still between them, and a job's quiet period, which the
// contract reads from the clock, would never end once the last
// transaction was its last join.
func (m *Mesh) sealBlocks(ctx context.Context, sim *escrow.SimChain, every time.Duration) {
	defer close(m.blocksDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		head, err := sim.Client().HeaderByNumber(ctx, nil)
		if err != nil {
			continue
		}
		lag := time.Since(time.Unix(int64(head.Time), 0)).Truncate(time.Second)
		if err := sim.AdvanceTime(max(time.Second, lag)); err != nil && ctx.Err() == nil {
			m.opts.Logger.Warn("localmesh: sealing an empty block", "err", err)
		}
	}
}

// fund sends the configured funding from dev account 1 to addr.
func (m *Mesh) fund(ctx context.Context, addr common.Address) error {
	b := m.Chain.Client()
	key := m.Chain.Keys()[1]
	from := ethcrypto.PubkeyToAddress(key.PublicKey)
	nonce, err := b.PendingNonceAt(ctx, from)
	if err != nil {
		return fmt.Errorf("localmesh: nonce: %w", err)
	}
	tip, err := b.SuggestGasTipCap(ctx)
	if err != nil {
		return fmt.Errorf("localmesh: gas tip: %w", err)
	}
	head, err := b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("localmesh: head: %w", err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID: big.NewInt(escrow.DevChainID), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: 21000, To: &addr, Value: m.opts.Chain.Funding,
	})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(big.NewInt(escrow.DevChainID)), key)
	if err != nil {
		return fmt.Errorf("localmesh: sign funding: %w", err)
	}
	if err := b.SendTransaction(ctx, signed); err != nil {
		return fmt.Errorf("localmesh: send funding: %w", err)
	}
	rcpt, err := b.TransactionReceipt(ctx, signed.Hash())
	if err != nil {
		return fmt.Errorf("localmesh: funding receipt: %w", err)
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("localmesh: funding %s failed", addr)
	}
	return nil
}

// Bootstrap returns the bootstrap member.
func (m *Mesh) Bootstrap() *Member { return m.Members[0] }

// BootstrapAddrs are the bootstrap node's full multiaddrs.
func (m *Mesh) BootstrapAddrs() []string { return m.bootstrap }

// Running returns the members that are running.
func (m *Mesh) Running() []*Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Member
	for _, mem := range m.Members {
		if mem.Node != nil {
			out = append(out, mem)
		}
	}
	return out
}

// Stop stops member i and releases its repo; its files stay.
func (m *Mesh) Stop(i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem := m.Members[i]
	if mn := m.opts.Mocknet; mn != nil && mem.Node != nil {
		if err := unlinkAll(mn, mem.Host.ID()); err != nil {
			return err
		}
	}
	return mem.stop()
}

// DatastoreBytes is the size of the keys and values under prefix in the
// member's datastore; "" counts every layer's (stores, blocks, DHT
// records).
func (mem *Member) DatastoreBytes(ctx context.Context, prefix string) (int64, error) {
	res, err := mem.ds.Query(ctx, dsq.Query{Prefix: prefix})
	if err != nil {
		return 0, err
	}
	defer res.Close()
	var n int64
	for e := range res.Next() {
		if e.Error != nil {
			return 0, e.Error
		}
		n += int64(len(e.Key) + len(e.Value))
	}
	return n, nil
}

func (mem *Member) stop() error {
	if mem.Node == nil {
		return nil
	}
	err := errors.Join(mem.Node.Close(), mem.ds.Close(), mem.repo.Close())
	mem.Node, mem.ds, mem.repo = nil, nil, nil
	return err
}

// Restart starts a stopped member again from its repo: same identity, same
// datastore.
func (m *Mesh) Restart(ctx context.Context, i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem := m.Members[i]
	if mem.Node != nil {
		return fmt.Errorf("localmesh: member %d is running", i)
	}
	return m.start(ctx, mem)
}

// Close stops every member.
func (m *Mesh) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for i := len(m.Members) - 1; i >= 0; i-- {
		errs = append(errs, m.Members[i].stop())
	}
	if m.stopBlocks != nil {
		m.stopBlocks()
		<-m.blocksDone
		m.stopBlocks = nil
	}
	if m.Chain != nil {
		errs = append(errs, m.Chain.Close())
		m.Chain = nil
	}
	return errors.Join(errs...)
}

// FastStore sets the store timings of a mesh on one machine: heads
// rebroadcast every second, and a DAG walk that gave up is repaired within
// 5 s. The walks keep the node default (20 s) to wait for a block: a walk
// also waits for the store's DAG workers, and under load a 3 s wait gave
// up thousands of walks per job, each to be repaired. With the node
// default repair interval (1 min), a record a walk missed early (a wallet
// binding written before its node had peers) stays missing for a minute
// or more, and every job that needs it waits.
func FastStore(cfg *node.Config) {
	cfg.Store.Rebroadcast = node.Duration(time.Second)
	cfg.Store.RepairInterval = node.Duration(5 * time.Second)
}
