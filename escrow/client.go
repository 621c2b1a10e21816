package escrow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/escrow/bindings"
)

// Backend is what the client needs from a chain: contract calls,
// transactions and logs, receipts to wait on, and the chain ID to refuse a
// chain it was not configured for. go-ethereum's ethclient.Client and the
// simulated backend's client both satisfy it.
type Backend interface {
	bind.ContractBackend
	TransactionReceipt(ctx context.Context, txHash common.Hash) (*types.Receipt, error)
	ChainID(ctx context.Context) (*big.Int, error)
}

// JobState is a job's phase on chain.
type JobState uint8

// The contract's job states.
const (
	JobNone JobState = iota
	JobFunded
	JobSettled
	JobRefunded
	JobAborted
)

func (s JobState) String() string {
	switch s {
	case JobNone:
		return "none"
	case JobFunded:
		return "funded"
	case JobSettled:
		return "settled"
	case JobRefunded:
		return "refunded"
	case JobAborted:
		return "aborted"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Stake is a processor's stake on chain.
type Stake struct {
	Active   *big.Int  // counted for quorum and by the dispatcher
	Pending  *big.Int  // cooling down after requestUnstake; still slashable
	UnlockAt time.Time // when Pending may be withdrawn
}

// Retry is the backoff for requests that fail because the chain cannot be
// reached.
type Retry struct {
	// Attempts is how often a request is tried in all. Default 6.
	Attempts int
	// Initial is the first wait between tries; it doubles each time.
	// Default 200ms.
	Initial time.Duration
	// Max caps the wait between tries. Default 5s.
	Max time.Duration
}

// Config configures a Client.
type Config struct {
	// Contract is the escrow's address. Default: none; New requires it
	// (Deploy fills it in).
	Contract common.Address
	// ChainID is the chain the client must talk to; New fails with
	// ErrWrongChain on any other. Default nil: whatever the backend reports.
	ChainID *big.Int
	// ReceiptPoll is how often a sent transaction's receipt is polled.
	// Default 100ms.
	ReceiptPoll time.Duration
	// ReleasePoll is how often WaitReleased reads the job's state.
	// Default 2s.
	ReleasePoll time.Duration
	// Retry is the backoff when the chain cannot be reached. Default
	// {6, 200ms, 5s}.
	Retry Retry
	// Logger receives the client's log lines. Default: discarded.
	Logger *slog.Logger
	// Registerer receives the client's metrics. Default nil: not
	// registered.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults; Contract still has to be set.
func DefaultConfig() Config {
	return Config{
		ReceiptPoll: 100 * time.Millisecond,
		ReleasePoll: 2 * time.Second,
		Retry:       Retry{Attempts: 6, Initial: 200 * time.Millisecond, Max: 5 * time.Second},
		Logger:      slog.New(slog.DiscardHandler),
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Contract == (common.Address{}):
		return fmt.Errorf("%w: no contract address", ErrBadConfig)
	case c.ChainID != nil && c.ChainID.Sign() <= 0:
		return fmt.Errorf("%w: chain ID %v", ErrBadConfig, c.ChainID)
	case c.ReceiptPoll <= 0 || c.ReleasePoll <= 0:
		return fmt.Errorf("%w: poll intervals must be positive", ErrBadConfig)
	case c.Retry.Attempts < 1 || c.Retry.Initial <= 0 || c.Retry.Max < c.Retry.Initial:
		return fmt.Errorf("%w: retry %+v", ErrBadConfig, c.Retry)
	case c.Logger == nil:
		return fmt.Errorf("%w: nil logger", ErrBadConfig)
	}
	return nil
}

// DeployParams are the contract's constructor parameters.
type DeployParams struct {
	// MinStake is the active stake an account needs to join a job and for
	// its settlement signature to count. Default 1 ether.
	MinStake *big.Int
	// QuorumNumerator / QuorumDenominator is the share of a job's members
	// that must sign its settlement; at least 2/3. Default 2/3.
	QuorumNumerator, QuorumDenominator uint64
	// UnstakeCooldown is how long requested unstakes stay locked (and
	// slashable). Default 7 days.
	UnstakeCooldown time.Duration
}

// DefaultDeployParams returns the defaults.
func DefaultDeployParams() DeployParams {
	return DeployParams{
		MinStake:          big.NewInt(1e18),
		QuorumNumerator:   2,
		QuorumDenominator: 3,
		UnstakeCooldown:   7 * 24 * time.Hour,
	}
}

// Validate checks the parameters against the contract's own rules.
func (p DeployParams) Validate() error {
	switch {
	case p.MinStake == nil || p.MinStake.Sign() <= 0:
		return fmt.Errorf("%w: min stake must be positive", ErrBadConfig)
	case p.QuorumDenominator == 0 || p.QuorumNumerator > p.QuorumDenominator:
		return fmt.Errorf("%w: quorum %d/%d", ErrBadConfig, p.QuorumNumerator, p.QuorumDenominator)
	case new(big.Int).Mul(big.NewInt(3), new(big.Int).SetUint64(p.QuorumNumerator)).Cmp(
		new(big.Int).Mul(big.NewInt(2), new(big.Int).SetUint64(p.QuorumDenominator))) < 0:
		return fmt.Errorf("%w: quorum %d/%d below 2/3", ErrBadConfig, p.QuorumNumerator, p.QuorumDenominator)
	case p.UnstakeCooldown < 0:
		return fmt.Errorf("%w: negative cool-down", ErrBadConfig)
	}
	return nil
}

// Client talks to one deployed escrow contract. Its methods are safe for
// concurrent use; transactions from one client are sent one at a time so
// their nonces do not collide.
type Client struct {
	backend  Backend
	auth     *bind.TransactOpts
	cfg      Config
	chainID  *big.Int
	abi      *abi.ABI
	bindings *bindings.Escrow
	contract *bind.BoundContract
	log      *slog.Logger
	metrics  *metrics

	sendMu sync.Mutex
	closer func() // closes a connection the client opened (Dial)
}

// Close closes the connection Dial opened; a client made with New or Deploy
// leaves its backend to its owner, and Close does nothing.
func (c *Client) Close() {
	if c.closer != nil {
		c.closer()
	}
}

// New connects a client to the escrow at cfg.Contract. auth signs
// transactions and may be nil for a read-only client. New checks the chain
// ID and that the contract is there.
func New(ctx context.Context, backend Backend, auth *bind.TransactOpts, cfg Config) (*Client, error) {
	c, err := newClient(ctx, backend, auth, cfg, false)
	if err != nil {
		return nil, err
	}
	code, err := retryValue(ctx, c, func() ([]byte, error) { return backend.CodeAt(ctx, cfg.Contract, nil) })
	if err != nil {
		return nil, err
	}
	if len(code) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoContract, cfg.Contract)
	}
	return c, nil
}

func newClient(ctx context.Context, backend Backend, auth *bind.TransactOpts, cfg Config, deploying bool) (*Client, error) {
	if deploying && cfg.Contract == (common.Address{}) {
		cfg.Contract = common.Address{1} // placeholder until the receipt names it
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	b := bindings.NewEscrow()
	parsed, err := bindings.EscrowMetaData.ParseABI()
	if err != nil {
		return nil, fmt.Errorf("escrow: parse ABI: %w", err)
	}
	c := &Client{
		backend:  backend,
		auth:     auth,
		cfg:      cfg,
		abi:      parsed,
		bindings: b,
		contract: b.Instance(backend, cfg.Contract),
		log:      cfg.Logger,
		metrics:  m,
	}
	chainID, err := retryValue(ctx, c, func() (*big.Int, error) { return backend.ChainID(ctx) })
	if err != nil {
		return nil, err
	}
	if cfg.ChainID != nil && cfg.ChainID.Cmp(chainID) != 0 {
		return nil, fmt.Errorf("%w: backend is on chain %v, configured %v", ErrWrongChain, chainID, cfg.ChainID)
	}
	c.chainID = chainID
	return c, nil
}

// Deploy deploys a new escrow contract with auth's account and returns a
// client for it.
func Deploy(ctx context.Context, backend Backend, auth *bind.TransactOpts, p DeployParams, cfg Config) (*Client, *types.Receipt, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if auth == nil {
		return nil, nil, ErrNoSigner
	}
	c, err := newClient(ctx, backend, auth, cfg, true)
	if err != nil {
		return nil, nil, err
	}
	code := common.FromHex(bindings.EscrowMetaData.Bin)
	args := c.bindings.PackConstructor(p.MinStake, new(big.Int).SetUint64(p.QuorumNumerator),
		new(big.Int).SetUint64(p.QuorumDenominator), big.NewInt(int64(p.UnstakeCooldown/time.Second)))
	rcpt, err := c.send(ctx, "deploy", nil, append(code, args...), true)
	if err != nil {
		return nil, nil, err
	}
	if rcpt.ContractAddress == (common.Address{}) {
		return nil, rcpt, bind.ErrNoAddressInReceipt
	}
	c.cfg.Contract = rcpt.ContractAddress
	c.contract = c.bindings.Instance(backend, rcpt.ContractAddress)
	c.log.Info("escrow deployed", "address", rcpt.ContractAddress, "tx", rcpt.TxHash, "gas", rcpt.GasUsed)
	return c, rcpt, nil
}

// Address is the contract's address.
func (c *Client) Address() common.Address { return c.cfg.Contract }

// ChainID is the chain the client talks to.
func (c *Client) ChainID() *big.Int { return new(big.Int).Set(c.chainID) }

// Domain is the EIP-712 domain settlements for this contract are signed in.
func (c *Client) Domain() Domain {
	return Domain{ChainID: c.ChainID(), Contract: c.cfg.Contract}
}

// From is the account that signs the client's transactions (zero for a
// read-only client).
func (c *Client) From() common.Address {
	if c.auth == nil {
		return common.Address{}
	}
	return c.auth.From
}

// Withdraw pays the signer's credit out to it.
func (c *Client) Withdraw(ctx context.Context) (*types.Receipt, error) {
	return c.send(ctx, "withdraw", nil, c.bindings.PackWithdraw(), false)
}

// Stake adds amount to the signer's active stake.
func (c *Client) Stake(ctx context.Context, amount *big.Int) (*types.Receipt, error) {
	return c.send(ctx, "stake", amount, c.bindings.PackStake(), false)
}

// RequestUnstake starts the cool-down for amount of the signer's stake.
func (c *Client) RequestUnstake(ctx context.Context, amount *big.Int) (*types.Receipt, error) {
	return c.send(ctx, "requestUnstake", nil, c.bindings.PackRequestUnstake(amount), false)
}

// WithdrawStake pays out stake whose cool-down is over.
func (c *Client) WithdrawStake(ctx context.Context) (*types.Receipt, error) {
	return c.send(ctx, "withdrawStake", nil, c.bindings.PackWithdrawStake(), false)
}

// StakeOf reads a processor's stake.
func (c *Client) StakeOf(ctx context.Context, processor common.Address) (Stake, error) {
	out, err := call(ctx, c, c.bindings.PackStakeOf(processor), c.bindings.UnpackStakeOf)
	if err != nil {
		return Stake{}, err
	}
	return Stake{Active: out.Active, Pending: out.Pending, UnlockAt: time.Unix(int64(out.UnlockAt), 0)}, nil
}

// CreditOf reads an account's withdrawable credit.
func (c *Client) CreditOf(ctx context.Context, account common.Address) (*big.Int, error) {
	return call(ctx, c, c.bindings.PackCreditOf(account), c.bindings.UnpackCreditOf)
}

// TotalBurned reads the stake burned by slashing so far.
func (c *Client) TotalBurned(ctx context.Context) (*big.Int, error) {
	return call(ctx, c, c.bindings.PackTotalBurned(), c.bindings.UnpackTotalBurned)
}

// MinStake reads the stake a signer needs.
func (c *Client) MinStake(ctx context.Context) (*big.Int, error) {
	return call(ctx, c, c.bindings.PackMinStake(), c.bindings.UnpackMinStake)
}

// call runs a read-only contract call with retries and decodes its result.
func call[T any](ctx context.Context, c *Client, data []byte, unpack func([]byte) (T, error)) (T, error) {
	v, err := retryValue(ctx, c, func() (T, error) {
		out, err := c.backend.CallContract(ctx, ethereum.CallMsg{To: &c.cfg.Contract, Data: data}, nil)
		if err != nil {
			var zero T
			return zero, err
		}
		return unpack(out)
	})
	method := "unknown"
	if len(data) >= 4 {
		if m, merr := c.abi.MethodById(data[:4]); merr == nil {
			method = m.Name
		}
	}
	c.metrics.read(method, err)
	return v, err
}

// send builds, signs and sends one transaction and waits for its receipt.
// The transaction is signed once; every retry re-sends the same bytes, so a
// send whose answer was lost cannot land twice.
func (c *Client) send(ctx context.Context, method string, value *big.Int, data []byte, create bool) (*types.Receipt, error) {
	return c.sendVia(ctx, c.contract, method, value, data, create)
}

// sendVia is send to the contract bc is bound to.
func (c *Client) sendVia(ctx context.Context, bc *bind.BoundContract, method string, value *big.Int, data []byte, create bool) (*types.Receipt, error) {
	if c.auth == nil {
		return nil, ErrNoSigner
	}
	c.sendMu.Lock()
	tx, err := c.signTx(ctx, bc, value, data, create)
	if err == nil {
		err = c.sendTx(ctx, tx)
	}
	c.sendMu.Unlock()
	if err != nil {
		c.metrics.tx(method, outcome(err))
		return nil, err
	}
	rcpt, err := c.waitReceipt(ctx, tx.Hash())
	if err != nil {
		c.metrics.tx(method, outcome(err))
		return nil, err
	}
	c.metrics.gas(method, rcpt.GasUsed)
	if rcpt.Status != types.ReceiptStatusSuccessful {
		err := c.replayRevert(ctx, tx, rcpt)
		c.metrics.tx(method, outcome(err))
		return rcpt, err
	}
	c.metrics.tx(method, "ok")
	c.log.Debug("escrow transaction", "method", method, "tx", tx.Hash(), "gas", rcpt.GasUsed)
	return rcpt, nil
}

func outcome(err error) string {
	switch {
	case errors.Is(err, ErrReverted):
		return "reverted"
	case errors.Is(err, ErrUnreachable):
		return "unreachable"
	}
	return "error"
}

func (c *Client) signTx(ctx context.Context, bc *bind.BoundContract, value *big.Int, data []byte, create bool) (*types.Transaction, error) {
	opts := *c.auth
	opts.Context = ctx
	opts.Value = value
	opts.NoSend = true
	return retryValue(ctx, c, func() (*types.Transaction, error) {
		if create {
			return bc.RawCreationTransact(&opts, data)
		}
		return bc.RawTransact(&opts, data)
	})
}

func (c *Client) sendTx(ctx context.Context, tx *types.Transaction) error {
	tries := 0
	_, err := retryValue(ctx, c, func() (struct{}, error) {
		tries++
		err := c.backend.SendTransaction(ctx, tx)
		if err != nil && tries > 1 && !transient(err) {
			// An earlier try may have reached the node though its answer
			// was lost; then the node now refuses the same transaction
			// ("already known", "nonce too low"). It is in, not lost.
			if _, _, lookErr := c.backend.TransactionByHash(ctx, tx.Hash()); lookErr == nil {
				return struct{}{}, nil
			}
		}
		return struct{}{}, err
	})
	return err
}

func (c *Client) waitReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	tick := time.NewTicker(c.cfg.ReceiptPoll)
	defer tick.Stop()
	failures := 0
	for {
		rcpt, err := c.backend.TransactionReceipt(ctx, hash)
		switch {
		case err == nil:
			return rcpt, nil
		case errors.Is(err, ethereum.NotFound) || indexing(err):
			failures = 0
		case transient(err):
			failures++
			c.metrics.retries.Inc()
			if failures >= c.cfg.Retry.Attempts {
				return nil, fmt.Errorf("%w: waiting for receipt of %s: %v", ErrUnreachable, hash, err)
			}
		default:
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// indexing reports a node still building its transaction index: the
// receipt is not known yet, which is no failure. The node says so only in
// its message text.
func indexing(err error) bool {
	var rpcErr rpc.Error
	return errors.As(err, &rpcErr) && strings.Contains(rpcErr.Error(), "indexing is in progress")
}

// replayRevert re-runs a mined, failed transaction as a call on the state
// before its block to learn why it reverted.
func (c *Client) replayRevert(ctx context.Context, tx *types.Transaction, rcpt *types.Receipt) error {
	msg := ethereum.CallMsg{From: c.auth.From, To: tx.To(), Value: tx.Value(), Data: tx.Data(), Gas: tx.Gas()}
	var at *big.Int
	if rcpt.BlockNumber != nil && rcpt.BlockNumber.Sign() > 0 {
		at = new(big.Int).Sub(rcpt.BlockNumber, big.NewInt(1))
	}
	_, err := c.backend.CallContract(ctx, msg, at)
	if err = classify(c.abi, err); err != nil && errors.Is(err, ErrReverted) {
		return err
	}
	return &RevertError{}
}

// retryValue runs f, retrying with backoff while the chain cannot be
// reached, and classifies what it finally returns.
func retryValue[T any](ctx context.Context, c *Client, f func() (T, error)) (T, error) {
	wait := c.cfg.Retry.Initial
	for attempt := 1; ; attempt++ {
		v, err := f()
		if err == nil {
			return v, nil
		}
		if !transient(err) {
			return v, classify(c.abi, err)
		}
		if attempt >= c.cfg.Retry.Attempts {
			return v, fmt.Errorf("%w: %v", ErrUnreachable, err)
		}
		c.metrics.retries.Inc()
		c.log.Warn("escrow: chain unreachable, retrying", "attempt", attempt, "wait", wait, "err", err)
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, c.cfg.Retry.Max)
	}
}
