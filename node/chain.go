package node

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
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
	if c.RPC == "" {
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
		ec, err := ethclient.DialContext(ctx, p.Config.Chain.RPC)
		if err != nil {
			return nil, nil, fmt.Errorf("node: dial chain %s: %w", p.Config.Chain.RPC, err)
		}
		closeFn = ec.Close
		ch = &Chain{Backend: ec, Contract: common.HexToAddress(p.Config.Chain.Contract)}
		if id := p.Config.Chain.ChainID; id != 0 {
			ch.ChainID = new(big.Int).SetUint64(id)
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
		return nil, nil, fmt.Errorf("%w: a chain needs the wallet key (%s)", ErrInvalidConfig, WalletFile)
	}
	chainID, err := ch.Backend.ChainID(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("node: chain ID: %w", err)
	}
	cfg := escrow.DefaultConfig()
	cfg.Contract = ch.Contract
	cfg.ChainID = ch.ChainID
	cfg.Logger = log.With("subsystem", "escrow")
	cfg.Registerer = reg
	cfg.ReleasePoll = 500 * time.Millisecond
	c, err = escrow.New(ctx, ch.Backend, bind.NewKeyedTransactor(p.WalletKey, chainID), cfg)
	if err != nil {
		return nil, nil, err
	}
	return c, closeFn, nil
}

// WalletAddress is the lowercase 0x address of a wallet key.
func WalletAddress(k *ecdsa.PrivateKey) string {
	return strings.ToLower(ethcrypto.PubkeyToAddress(k.PublicKey).Hex())
}
