package escrow

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"
)

// The dev chain serves two JSON-RPC methods of its own beside eth_*, under
// the "jobmesh" namespace, so that a process given only the dev chain's URL
// can find the escrow and fund a fresh wallet:
//
//	jobmesh_escrow()            -> "0x…" (the escrow's address; zero if none was deployed)
//	jobmesh_fund(to, amountHex) -> "0x…" (the funding transaction's hash, once mined)
//
// Other chains do not have them; the helpers below turn "method not found"
// into ErrNotDevChain.

// DevRPCNamespace is the JSON-RPC namespace of the dev chain's own methods.
const DevRPCNamespace = "jobmesh"

// MaxDevFunding caps one jobmesh_fund request: 1000 ether, plenty for gas
// and stakes, and small next to a dev account's balance.
var MaxDevFunding = new(big.Int).Mul(big.NewInt(1000), big.NewInt(params.Ether))

var (
	// ErrNotDevChain: the endpoint does not serve the dev chain's own
	// methods (it is some other chain).
	ErrNotDevChain = errors.New("escrow: not a jobmesh dev chain")
	// ErrFundingRefused: the dev chain's faucet refused a request (bad
	// amount, or the faucet account could not pay).
	ErrFundingRefused = errors.New("escrow: dev chain refused funding")
)

// devAPI is the "jobmesh" namespace. Funding sends from the last dev
// account, which nothing else in jobmesh signs with, one request at a time
// so that the faucet's nonces never collide.
type devAPI struct {
	stack  *node.Node
	faucet *ecdsa.PrivateKey
	// ready is closed once StartDevChain has deployed the escrow: the
	// server answers from its start, and the deployer may be the faucet
	// account too (a chain with one dev account).
	ready chan struct{}

	mu     sync.Mutex
	escrow common.Address

	fundMu sync.Mutex
	client *ethclient.Client // in-process, made on first use
}

// Escrow returns the escrow deployed at start (zero if none).
func (a *devAPI) Escrow(ctx context.Context) (common.Address, error) {
	if err := a.wait(ctx); err != nil {
		return common.Address{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.escrow, nil
}

func (a *devAPI) wait(ctx context.Context) error {
	select {
	case <-a.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *devAPI) setEscrow(addr common.Address) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.escrow = addr
}

// Fund sends amount wei to to from the faucet account and waits for the
// transaction to be mined.
func (a *devAPI) Fund(ctx context.Context, to common.Address, amount *hexutil.Big) (common.Hash, error) {
	if amount == nil || amount.ToInt().Sign() <= 0 {
		return common.Hash{}, errors.New("amount must be positive")
	}
	if amount.ToInt().Cmp(MaxDevFunding) > 0 {
		return common.Hash{}, fmt.Errorf("amount %v wei is above the faucet's limit of %v wei a request", amount.ToInt(), MaxDevFunding)
	}
	if to == (common.Address{}) {
		return common.Hash{}, errors.New("no recipient")
	}
	if err := a.wait(ctx); err != nil {
		return common.Hash{}, err
	}
	a.fundMu.Lock()
	defer a.fundMu.Unlock()
	if a.client == nil {
		a.client = ethclient.NewClient(a.stack.Attach())
	}
	key := a.faucet
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := a.client.PendingNonceAt(ctx, from)
	if err != nil {
		return common.Hash{}, err
	}
	tip, err := a.client.SuggestGasTipCap(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	head, err := a.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return common.Hash{}, err
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	chainID := big.NewInt(DevChainID)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{
		ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: 21000, To: &to, Value: amount.ToInt(),
	})
	if err != nil {
		return common.Hash{}, err
	}
	if err := a.client.SendTransaction(ctx, tx); err != nil {
		return common.Hash{}, err
	}
	// The simulated beacon seals a block for the transaction at once; the
	// receipt shows up within a few polls.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		rcpt, err := a.client.TransactionReceipt(ctx, tx.Hash())
		if err == nil {
			if rcpt.Status != types.ReceiptStatusSuccessful {
				return common.Hash{}, fmt.Errorf("funding transaction %s failed", tx.Hash())
			}
			return tx.Hash(), nil
		}
		select {
		case <-ctx.Done():
			return common.Hash{}, ctx.Err()
		case <-tick.C:
		}
	}
}

func (a *devAPI) close() {
	a.fundMu.Lock()
	defer a.fundMu.Unlock()
	if a.client != nil {
		a.client.Close()
		a.client = nil
	}
}

// DevEscrow asks the dev chain behind c for the escrow it deployed at start.
// It fails with ErrNotDevChain on any other chain, and with ErrNoContract
// when the dev chain deployed none.
func DevEscrow(ctx context.Context, c *rpc.Client) (common.Address, error) {
	var addr common.Address
	if err := c.CallContext(ctx, &addr, DevRPCNamespace+"_escrow"); err != nil {
		return common.Address{}, devRPCError(err)
	}
	if addr == (common.Address{}) {
		return common.Address{}, fmt.Errorf("%w: the dev chain deployed no escrow", ErrNoContract)
	}
	return addr, nil
}

// DevFund asks the dev chain behind c to send amount wei to to from its
// faucet account, and returns the mined funding transaction's hash.
func DevFund(ctx context.Context, c *rpc.Client, to common.Address, amount *big.Int) (common.Hash, error) {
	if amount == nil || amount.Sign() <= 0 {
		return common.Hash{}, fmt.Errorf("%w: amount must be positive", ErrFundingRefused)
	}
	var h common.Hash
	if err := c.CallContext(ctx, &h, DevRPCNamespace+"_fund", to, (*hexutil.Big)(amount)); err != nil {
		return common.Hash{}, devRPCError(err)
	}
	return h, nil
}

// devRPCError classifies an error of a dev chain call.
func devRPCError(err error) error {
	var rerr rpc.Error
	if errors.As(err, &rerr) {
		// -32601: method not found, the endpoint is another chain.
		if rerr.ErrorCode() == -32601 || strings.Contains(err.Error(), "does not exist") {
			return fmt.Errorf("%w (the endpoint has no %s_* methods)", ErrNotDevChain, DevRPCNamespace)
		}
		return fmt.Errorf("%w: %v", ErrFundingRefused, err)
	}
	if transient(err) {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	return fmt.Errorf("escrow: dev chain call: %w", err)
}
