package node

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"log/slog"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/jobmesh/jobmesh/escrow"
)

// DeployEscrow deploys a new escrow contract with parameters p to the
// chain at cc.RPC (checked against cc.ChainID when set), paying the gas
// from key, and returns the deployment's receipt: its ContractAddress is
// the escrow's address.
func DeployEscrow(ctx context.Context, cc ChainConfig, key *ecdsa.PrivateKey, p escrow.DeployParams, log *slog.Logger) (*types.Receipt, error) {
	if cc.RPC == "" {
		return nil, fmt.Errorf("%w: no chain endpoint ([chain] rpc or --eth-rpc)", ErrInvalidConfig)
	}
	if key == nil {
		return nil, fmt.Errorf("%w: deploying needs the wallet key ([wallet] keystore or %s)", ErrInvalidConfig, WalletFile)
	}
	ec, err := ethclient.DialContext(ctx, cc.RPC)
	if err != nil {
		return nil, fmt.Errorf("node: dial chain %s: %w", cc.RPC, err)
	}
	defer ec.Close()
	chainID, err := ec.ChainID(ctx)
	if err != nil {
		return nil, fmt.Errorf("node: chain endpoint %s (check [chain] rpc or --eth-rpc): %w", cc.RPC, err)
	}
	if cc.ChainID != 0 && chainID.Uint64() != cc.ChainID {
		return nil, fmt.Errorf("%w: %s is on chain %v, [chain] chain_id is %d", escrow.ErrWrongChain, cc.RPC, chainID, cc.ChainID)
	}
	auth := bind.NewKeyedTransactor(key, chainID)
	cfg := escrow.DefaultConfig()
	cfg.ChainID = chainID
	cfg.Logger = log
	_, rcpt, err := escrow.Deploy(ctx, ec, auth, p, cfg)
	if err != nil {
		return nil, fmt.Errorf("node: deploy the escrow on %s: %w", cc.RPC, err)
	}
	return rcpt, nil
}

// SetChain writes cc as the repo's [chain] section.
func (r *Repo) SetChain(cc ChainConfig) error {
	return r.updateConfig(func(c *Config) { c.Chain = cc })
}
