package escrow

import (
	"context"
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// DevKeySeed is the public seed the dev accounts' keys derive from:
// key i = keccak256(DevKeySeed ‖ uint32 big-endian i), hashed again while
// it is not a valid secp256k1 scalar. These keys are public; they fund
// development chains only.
const DevKeySeed = "jobmesh-devchain-v1"

// DevChainID is the chain ID of the simulated and dev chains.
const DevChainID = 1337

// devChainConfig is go-ethereum's dev chain config without the forks no
// production chain runs yet: it stops at Osaka. (Bogota/Amsterdam's
// EIP-8037/8038 reprice state access and creation several-fold; gas figures
// measured under them would say nothing about Polygon or mainnet.)
func devChainConfig() *params.ChainConfig {
	c := *params.AllDevChainProtocolChanges
	c.BogotaTime = nil
	c.UBTTime = nil
	return &c
}

// DevKey returns dev account i's key.
func DevKey(i int) *ecdsa.PrivateKey {
	var idx [4]byte
	binary.BigEndian.PutUint32(idx[:], uint32(i))
	h := crypto.Keccak256([]byte(DevKeySeed), idx[:])
	for {
		if k, err := crypto.ToECDSA(h); err == nil {
			return k
		}
		h = crypto.Keccak256(h)
	}
}

// DevKeys returns the first n dev keys.
func DevKeys(n int) []*ecdsa.PrivateKey {
	keys := make([]*ecdsa.PrivateKey, n)
	for i := range keys {
		keys[i] = DevKey(i)
	}
	return keys
}

// DevChainConfig configures the simulated and dev chains.
type DevChainConfig struct {
	// Addr is the host:port the dev chain serves JSON-RPC over HTTP on;
	// only loopback hosts are accepted. Default "127.0.0.1:0" (a free
	// port). Unused by NewSimChain.
	Addr string
	// Accounts is how many dev accounts are funded. Default 10.
	Accounts int
	// Balance is each dev account's starting balance in wei. Default
	// 1,000,000 ether.
	Balance *big.Int
	// Logger receives the chain's own log lines. Default: discarded.
	Logger *slog.Logger
	// Escrow, if set, makes StartDevChain deploy the escrow contract with
	// these parameters from dev account 0 as the chain's first transaction,
	// so its address is the same on every start (DevChain.Escrow). Default
	// nil: nothing is deployed. Unused by NewSimChain.
	Escrow *DeployParams
	// Heartbeat: when no block has been sealed for this long, the dev
	// chain seals an empty one, so that block time follows the wall clock
	// as on a live chain and time-based rules (an unstake's cool-down, a
	// job's deadline) end on their own. Default 2s; 0 turns it off (blocks
	// only for transactions). Unused by NewSimChain.
	Heartbeat time.Duration
}

// DefaultDevChainConfig returns the defaults.
func DefaultDevChainConfig() DevChainConfig {
	return DevChainConfig{
		Addr:      "127.0.0.1:0",
		Accounts:  10,
		Balance:   new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(params.Ether)),
		Logger:    slog.New(slog.DiscardHandler),
		Heartbeat: 2 * time.Second,
	}
}

// Validate checks the configuration.
func (c DevChainConfig) Validate() error {
	if c.Accounts < 1 || c.Accounts > 10_000 {
		return fmt.Errorf("%w: %d dev accounts", ErrBadConfig, c.Accounts)
	}
	if c.Balance == nil || c.Balance.Sign() <= 0 {
		return fmt.Errorf("%w: dev balance must be positive", ErrBadConfig)
	}
	if c.Logger == nil {
		return fmt.Errorf("%w: nil logger", ErrBadConfig)
	}
	if c.Heartbeat < 0 {
		return fmt.Errorf("%w: negative heartbeat", ErrBadConfig)
	}
	return nil
}

func (c DevChainConfig) alloc() (types.GenesisAlloc, []*ecdsa.PrivateKey) {
	keys := DevKeys(c.Accounts)
	alloc := types.GenesisAlloc{}
	for _, k := range keys {
		alloc[crypto.PubkeyToAddress(k.PublicKey)] = types.Account{Balance: new(big.Int).Set(c.Balance)}
	}
	return alloc, keys
}

// SimChain is go-ethereum's simulated backend with funded dev accounts: a
// real EVM in process, the embedded default chain. Its Client mines a block
// for every transaction it sends, as geth --dev does.
type SimChain struct {
	sim  *simulated.Backend
	keys []*ecdsa.PrivateKey
	// mine serialises send-and-seal: two concurrent Commits can leave the
	// simulated backend's transaction pool waiting forever (two processors
	// racing to settle one job did).
	mine sync.Mutex
}

// NewSimChain starts a simulated chain.
func NewSimChain(cfg DevChainConfig) (*SimChain, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	alloc, keys := cfg.alloc()
	sim := simulated.NewBackend(alloc, func(_ *node.Config, ec *ethconfig.Config) {
		ec.Genesis.Config = devChainConfig()
	})
	return &SimChain{sim: sim, keys: keys}, nil
}

// Client is the chain's backend for a Client.
func (s *SimChain) Client() Backend {
	return instamine{Client: s.sim.Client(), sim: s.sim, mu: &s.mine}
}

// Keys are the funded dev keys.
func (s *SimChain) Keys() []*ecdsa.PrivateKey { return s.keys }

// Transactor signs transactions with dev key i.
func (s *SimChain) Transactor(i int) *bind.TransactOpts {
	return bind.NewKeyedTransactor(s.keys[i], big.NewInt(DevChainID))
}

// AdvanceTime mines an empty block d later than the head. The simulated
// backend refuses to move time while its transaction pool holds
// transactions, and the pool drops those of a sealed block in the
// background; so a refusal is tried again until the pool has caught up, for
// at most 10s.
func (s *SimChain) AdvanceTime(d time.Duration) error {
	s.mine.Lock()
	defer s.mine.Unlock()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		err := s.sim.AdjustTime(d)
		if err == nil {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("escrow: advancing time: %w", err)
		case <-tick.C:
		}
	}
}

// Close stops the chain.
func (s *SimChain) Close() error { return s.sim.Close() }

// instamine seals a block after each transaction, so receipts appear without
// anyone calling Commit.
type instamine struct {
	simulated.Client
	sim *simulated.Backend
	mu  *sync.Mutex // the chain's: one send-and-seal at a time
}

func (c instamine) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.Client.SendTransaction(ctx, tx); err != nil {
		return err
	}
	c.sim.Commit()
	return nil
}

// DevChain is an in-process geth dev node (simulated beacon, a block per
// transaction) serving JSON-RPC over HTTP on a loopback address, so several
// local processes can share one chain. Beside eth_* it serves
// jobmesh_escrow and jobmesh_fund (see DevEscrow and DevFund): the escrow's
// address and a faucet that pays from the last dev account.
type DevChain struct {
	stack     *node.Node
	dev       *devAPI
	escrow    common.Address
	keys      []*ecdsa.PrivateKey
	done      chan struct{}
	wdIndex   atomic.Uint64 // next empty withdrawal's index
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// StartDevChain starts a dev chain. It runs until Close or until ctx ends.
func StartDevChain(ctx context.Context, cfg DevChainConfig) (*DevChain, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, portStr, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dev chain address %q: %v", ErrBadConfig, cfg.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%w: dev chain must listen on loopback, not %q", ErrBadConfig, host)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("%w: dev chain port %q", ErrBadConfig, portStr)
	}
	alloc, keys := cfg.alloc()

	nodeConf := node.DefaultConfig
	nodeConf.DataDir = ""
	nodeConf.P2P = p2p.Config{NoDiscovery: true, MaxPeers: 0}
	nodeConf.HTTPHost = host
	nodeConf.HTTPPort = port
	nodeConf.HTTPModules = []string{"eth", "net", "web3", DevRPCNamespace}
	nodeConf.HTTPVirtualHosts = []string{"localhost", "127.0.0.1", host}
	nodeConf.Logger = nil
	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("escrow: dev chain node: %w", err)
	}
	genesisAlloc := core.SystemContractAllocs()
	maps.Copy(genesisAlloc, alloc)
	ethConf := ethconfig.Defaults
	ethConf.Genesis = &core.Genesis{
		Config:   devChainConfig(),
		GasLimit: ethconfig.Defaults.Miner.GasCeil,
		Alloc:    genesisAlloc,
	}
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.TxPool.NoLocals = true
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("escrow: dev chain eth service: %w", err)
	}
	stack.RegisterAPIs([]rpc.API{{
		Namespace: "eth",
		Service:   filters.NewFilterAPI(filters.NewFilterSystem(backend.APIBackend, filters.Config{})),
	}})
	// Period 0: the beacon seals a block as soon as a transaction arrives.
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, backend)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("escrow: dev chain beacon: %w", err)
	}
	catalyst.RegisterSimulatedBeaconAPIs(stack, beacon)
	dev := &devAPI{stack: stack, faucet: keys[len(keys)-1], ready: make(chan struct{})}
	stack.RegisterAPIs([]rpc.API{{Namespace: DevRPCNamespace, Service: dev}})
	stack.RegisterLifecycle(beacon)
	if err := stack.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("escrow: dev chain start: %w", err)
	}
	d := &DevChain{stack: stack, keys: keys, dev: dev, done: make(chan struct{})}
	if err := d.awaitSealer(ctx); err != nil {
		d.Close()
		return nil, err
	}
	// The heartbeat starts before the escrow is deployed: the simulated
	// beacon subscribes to new transactions in a goroutine of its own, and
	// a transaction sent before it has subscribed is never sealed on its
	// own; the next heartbeat block takes it in.
	if cfg.Heartbeat > 0 {
		d.wg.Go(func() { d.heartbeat(cfg.Heartbeat, cfg.Logger) })
	}
	if cfg.Escrow != nil {
		ec := ethclient.NewClient(stack.Attach())
		c, _, err := Deploy(ctx, ec, bind.NewKeyedTransactor(keys[0], big.NewInt(DevChainID)), *cfg.Escrow, DefaultConfig())
		ec.Close()
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("escrow: dev chain: deploy escrow: %w", err)
		}
		d.escrow = c.Address()
		dev.setEscrow(d.escrow)
	}
	close(dev.ready)
	cfg.Logger.Info("dev chain started", "rpc", d.URL(), "chainID", DevChainID, "accounts", len(keys))
	go func() {
		select {
		case <-ctx.Done():
			d.Close()
		case <-d.done:
		}
	}()
	return d, nil
}

// URL is the dev chain's JSON-RPC endpoint.
func (d *DevChain) URL() string { return d.stack.HTTPEndpoint() }

// Escrow is the address of the escrow deployed at start, or zero if
// DevChainConfig.Escrow was nil.
func (d *DevChain) Escrow() common.Address { return d.escrow }

// Keys are the funded dev keys.
func (d *DevChain) Keys() []*ecdsa.PrivateKey { return d.keys }

// Close stops the chain; calling it again does nothing.
func (d *DevChain) Close() error {
	d.closeOnce.Do(func() {
		close(d.done)
		d.wg.Wait()
		d.dev.close()
		d.closeErr = d.stack.Close()
	})
	return d.closeErr
}

// heartbeat seals an empty block whenever the head is older than every. It
// queues a zero-amount beacon withdrawal (dev_addWithdrawal, in process
// only), which the simulated beacon seals through the same loop that seals
// transactions; calling its Commit directly would race that loop.
func (d *DevChain) heartbeat(every time.Duration, log *slog.Logger) {
	rc := d.stack.Attach()
	defer rc.Close()
	ec := ethclient.NewClient(rc)
	faucet := crypto.PubkeyToAddress(d.keys[len(d.keys)-1].PublicKey)
	tick := time.NewTicker(max(every/4, 10*time.Millisecond))
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-d.done
		cancel()
	}()
	for {
		select {
		case <-d.done:
			return
		case <-tick.C:
		}
		head, err := ec.HeaderByNumber(ctx, nil)
		if err != nil || time.Since(time.Unix(int64(head.Time), 0)) < every {
			continue
		}
		w := &types.Withdrawal{Index: d.wdIndex.Add(1) - 1, Address: faucet}
		if err := rc.CallContext(ctx, nil, "dev_addWithdrawal", w); err != nil && ctx.Err() == nil {
			log.Warn("dev chain heartbeat", "err", err)
		}
	}
}

// awaitSealer has the chain's first block sealed: it asks for an empty
// block until one appears. The simulated beacon subscribes to new
// transactions and withdrawals in a goroutine of its own; until it has, a
// transaction would go unsealed, and closing the chain would crash that
// goroutine (it subscribes to a closed pool). A sealed block shows it is
// listening.
func (d *DevChain) awaitSealer(ctx context.Context) error {
	rc := d.stack.Attach()
	defer rc.Close()
	ec := ethclient.NewClient(rc)
	faucet := crypto.PubkeyToAddress(d.keys[len(d.keys)-1].PublicKey)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if n, err := ec.BlockNumber(ctx); err == nil && n > 0 {
			return nil
		}
		w := &types.Withdrawal{Index: d.wdIndex.Add(1) - 1, Address: faucet}
		if err := rc.CallContext(ctx, nil, "dev_addWithdrawal", w); err != nil {
			return fmt.Errorf("escrow: dev chain: first block: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("escrow: dev chain: no block sealed: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
