package escrow

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
)

// Wallet is an account in a go-ethereum keystore. It signs with the
// passphrase each time, so the keystore never holds the key unlocked.
type Wallet struct {
	KeyStore   *keystore.KeyStore
	Account    accounts.Account
	Passphrase string
}

// Transactor returns transaction options that sign with the wallet for
// chainID.
func (w Wallet) Transactor(chainID *big.Int) *bind.TransactOpts {
	return &bind.TransactOpts{
		From: w.Account.Address,
		Signer: func(from common.Address, tx *types.Transaction) (*types.Transaction, error) {
			if from != w.Account.Address {
				return nil, bind.ErrNotAuthorized
			}
			return w.KeyStore.SignTxWithPassphrase(w.Account, w.Passphrase, tx, chainID)
		},
	}
}

// SignSettlement signs a settlement's EIP-712 digest with the wallet's key,
// in the contract's signature format.
func (w Wallet) SignSettlement(d Domain, s Settlement) ([]byte, error) {
	digest := s.Digest(d)
	sig, err := w.KeyStore.SignHashWithPassphrase(w.Account, w.Passphrase, digest[:])
	if err != nil {
		return nil, fmt.Errorf("escrow: sign settlement: %w", err)
	}
	sig[64] += 27
	return sig, nil
}

// Dial connects to the escrow at cfg.Contract over a JSON-RPC endpoint
// (http(s)://, ws(s)://, or an IPC path) and signs with the wallet. Close
// the client to close the connection.
func Dial(ctx context.Context, rpcURL string, w Wallet, cfg Config) (*Client, error) {
	if w.KeyStore == nil {
		return nil, fmt.Errorf("%w: wallet has no keystore", ErrBadConfig)
	}
	if !w.KeyStore.HasAddress(w.Account.Address) {
		return nil, fmt.Errorf("%w: account %s not in keystore", ErrBadConfig, w.Account.Address)
	}
	ec, err := ethclient.DialContext(ctx, rpcURL)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %v", ErrUnreachable, rpcURL, err)
	}
	// The signer needs the chain ID, which New reads from the chain.
	var chainID *big.Int
	auth := &bind.TransactOpts{
		From: w.Account.Address,
		Signer: func(from common.Address, tx *types.Transaction) (*types.Transaction, error) {
			return w.Transactor(chainID).Signer(from, tx)
		},
	}
	c, err := New(ctx, ec, auth, cfg)
	if err != nil {
		ec.Close()
		return nil, err
	}
	chainID = c.ChainID()
	c.closer = ec.Close
	return c, nil
}
