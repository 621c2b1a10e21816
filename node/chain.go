package node

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/escrow"
)

// Chain is a chain a node settles on: a backend and the escrow contract's
// address. Tests and localmesh pass one built on escrow.SimChain; daemons
// get one from the [chain] section.
type Chain struct {
	Backend  escrow.Backend
	Contract common.Address
	// ChainID, when set, is checked against the backend's. Default nil.
	ChainID *big.Int
}

// ChainConfig is the [chain] section.
type ChainConfig struct {
	RPC      string `toml:"rpc"`
	Contract string `toml:"contract"`
	ChainID  uint64 `toml:"chain_id"`
}

func (c ChainConfig) validate() error {
	if c.RPC == "" || c.Contract == "" {
		return nil
	}
	if !isHexAddress(c.Contract) {
		return fmt.Errorf("%w: [chain] contract %q is not a 0x-prefixed 20-byte hex address", ErrInvalidConfig, c.Contract)
	}
	return nil
}

// escrowClient builds the node's escrow client: from p.Chain, else by
// dialling [chain] rpc; nil when the node has no chain. It signs with the
// wallet key. close releases what it dialled.
func escrowClient(ctx context.Context, p Params, log *slog.Logger, reg prometheus.Registerer) (c *escrow.Client, closeFn func(), err error) {
	ch := p.Chain
	closeFn = func() {}
	if ch == nil && p.Config.Chain.RPC != "" {
		if ch, closeFn, err = DialChain(ctx, p.Config.Chain); err != nil {
			return nil, nil, err
		}
	}
	if ch == nil {
		return nil, closeFn, nil
	}
	defer func() {
		if err != nil {
			closeFn()
		}
	}()
	if p.WalletKey == nil {
		return nil, nil, fmt.Errorf("%w: a chain needs the wallet key ([wallet] keystore or %s)", ErrInvalidConfig, WalletFile)
	}
	cfg := escrow.DefaultConfig()
	cfg.Contract = ch.Contract
	cfg.ChainID = ch.ChainID
	cfg.Logger = log.With("subsystem", "escrow")
	cfg.Registerer = reg
	cfg.ReleasePoll = 500 * time.Millisecond
	var chainID *big.Int
	c, err = escrow.New(ctx, ch.Backend, lateTransactor(p.WalletKey, &chainID), cfg)
	if errors.Is(err, escrow.ErrUnreachable) && p.Config.Chain.RPC != "" && p.Chain == nil {
		return nil, nil, fmt.Errorf("node: chain endpoint %s (check [chain] rpc or --eth-rpc): %w", p.Config.Chain.RPC, err)
	}
	if err != nil {
		return nil, nil, err
	}
	chainID = c.ChainID()
	return c, closeFn, nil
}

// WalletAddress is the lowercase 0x address of a wallet key.
func WalletAddress(k *ecdsa.PrivateKey) string {
	return strings.ToLower(ethcrypto.PubkeyToAddress(k.PublicKey).Hex())
}

// lateTransactor signs with key for the chain ID *chainID holds when it
// signs: escrow.New reads (and retries, and checks) the chain ID, so the
// signer learns it from the client rather than asking the chain itself.
func lateTransactor(key *ecdsa.PrivateKey, chainID **big.Int) *bind.TransactOpts {
	from := ethcrypto.PubkeyToAddress(key.PublicKey)
	return &bind.TransactOpts{
		From: from,
		Signer: func(addr common.Address, tx *types.Transaction) (*types.Transaction, error) {
			if addr != from {
				return nil, bind.ErrNotAuthorized
			}
			if *chainID == nil {
				return nil, errors.New("node: signing before the chain ID is known")
			}
			return types.SignTx(tx, types.LatestSignerForChainID(*chainID), key)
		},
	}
}

// DialChain connects to the chain of a [chain] section: it dials rpc and,
// when contract is empty, asks the endpoint for its escrow's address, which
// a 'jobnode bootstrap --devchain' chain tells (escrow.DevEscrow); an
// endpoint that is down is retried with backoff first. closeFn closes the
// connection.
func DialChain(ctx context.Context, cc ChainConfig) (ch *Chain, closeFn func(), err error) {
	if cc.RPC == "" {
		return nil, nil, fmt.Errorf("%w: no chain endpoint ([chain] rpc or --eth-rpc)", ErrInvalidConfig)
	}
	if err := cc.validate(); err != nil {
		return nil, nil, err
	}
	rc, err := rpc.DialContext(ctx, cc.RPC)
	if err != nil {
		return nil, nil, fmt.Errorf("node: dial chain %s: %w", cc.RPC, err)
	}
	ec := ethclient.NewClient(rc)
	ch = &Chain{Backend: ec, Contract: common.HexToAddress(cc.Contract)}
	if cc.ChainID != 0 {
		ch.ChainID = new(big.Int).SetUint64(cc.ChainID)
	}
	if cc.Contract == "" {
		addr, err := devEscrow(ctx, rc)
		if errors.Is(err, escrow.ErrNotDevChain) {
			ec.Close()
			return nil, nil, fmt.Errorf("%w: [chain] contract (or --escrow) is needed: %s is not a jobmesh dev chain that would tell it", ErrInvalidConfig, cc.RPC)
		}
		if err != nil {
			ec.Close()
			return nil, nil, fmt.Errorf("node: asking %s for its escrow (check [chain] rpc or --eth-rpc): %w", cc.RPC, err)
		}
		ch.Contract = addr
	}
	return ch, ec.Close, nil
}

// devEscrow calls escrow.DevEscrow, retrying an endpoint that is down with
// the escrow client's backoff.
func devEscrow(ctx context.Context, rc *rpc.Client) (common.Address, error) {
	r := escrow.DefaultConfig().Retry
	wait := r.Initial
	for i := 1; ; i++ {
		addr, err := escrow.DevEscrow(ctx, rc)
		if !errors.Is(err, escrow.ErrUnreachable) || i >= r.Attempts {
			return addr, err
		}
		select {
		case <-ctx.Done():
			return common.Address{}, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, r.Max)
	}
}

// OpenEscrow dials the chain of cc (see DialChain) and returns a client of
// its escrow that signs with key, or a read-only one when key is nil; the
// wallet and stake commands use it without a running node. closeFn closes
// the connection.
func OpenEscrow(ctx context.Context, cc ChainConfig, key *ecdsa.PrivateKey, log *slog.Logger) (c *escrow.Client, closeFn func(), err error) {
	ch, closeFn, err := DialChain(ctx, cc)
	if err != nil {
		return nil, nil, err
	}
	cfg := escrow.DefaultConfig()
	cfg.Contract = ch.Contract
	cfg.ChainID = ch.ChainID
	cfg.Logger = log
	var (
		auth    *bind.TransactOpts
		chainID *big.Int
	)
	if key != nil {
		auth = lateTransactor(key, &chainID)
	}
	c, err = escrow.New(ctx, ch.Backend, auth, cfg)
	if errors.Is(err, escrow.ErrUnreachable) {
		closeFn()
		return nil, nil, fmt.Errorf("node: chain endpoint %s (check [chain] rpc or --eth-rpc): %w", cc.RPC, err)
	}
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	chainID = c.ChainID()
	return c, closeFn, nil
}
