package escrow

import (
	"errors"
	"fmt"
	"math/big"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/jobmesh/jobmesh/internal/wait"
)

// TestDevChainServesEscrowAndFaucet: a process given only the dev chain's
// URL learns the escrow's address and funds fresh wallets, several at once.
func TestDevChainServesEscrowAndFaucet(t *testing.T) {
	ctx := t.Context()
	dc := DefaultDevChainConfig()
	dc.Accounts = 3
	params := DefaultDeployParams()
	dc.Escrow = &params
	chain, err := StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	rc, err := rpc.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	addr, err := DevEscrow(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	if addr != chain.Escrow() {
		t.Fatalf("jobmesh_escrow says %s, the chain deployed %s", addr, chain.Escrow())
	}

	ec := ethclient.NewClient(rc)
	faucet := crypto.PubkeyToAddress(chain.Keys()[len(chain.Keys())-1].PublicKey)
	faucetBefore, err := ec.BalanceAt(ctx, faucet, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Concurrent requests: the faucet's nonces must not collide.
	const n = 4
	amount := big.NewInt(3e18)
	var wg sync.WaitGroup
	errs := make([]error, n)
	wallets := make([]common.Address, n)
	for i := range n {
		k, err := crypto.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		wallets[i] = crypto.PubkeyToAddress(k.PublicKey)
		wg.Go(func() { _, errs[i] = DevFund(ctx, rc, wallets[i], amount) })
	}
	wg.Wait()
	for i, w := range wallets {
		if errs[i] != nil {
			t.Fatalf("funding %d: %v", i, errs[i])
		}
		bal, err := ec.BalanceAt(ctx, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		if bal.Cmp(amount) != 0 {
			t.Fatalf("wallet %d has %v, funded %v", i, bal, amount)
		}
	}
	faucetAfter, err := ec.BalanceAt(ctx, faucet, nil)
	if err != nil {
		t.Fatal(err)
	}
	paid := new(big.Int).Sub(faucetBefore, faucetAfter)
	if min := new(big.Int).Mul(amount, big.NewInt(n)); paid.Cmp(min) < 0 {
		t.Fatalf("the faucet paid %v, less than the %v it sent", paid, min)
	}

	over := new(big.Int).Add(MaxDevFunding, big.NewInt(1))
	if _, err := DevFund(ctx, rc, wallets[0], over); !errors.Is(err, ErrFundingRefused) {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := DevFund(ctx, rc, wallets[0], big.NewInt(0)); !errors.Is(err, ErrFundingRefused) {
		t.Fatalf("zero amount: %v", err)
	}
	if _, err := DevFund(ctx, rc, common.Address{}, amount); !errors.Is(err, ErrFundingRefused) {
		t.Fatalf("zero address: %v", err)
	}
	bal, err := ec.BalanceAt(ctx, wallets[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(amount) != 0 {
		t.Fatalf("refused requests changed a balance: %v", bal)
	}
}

func TestDevChainWithoutEscrow(t *testing.T) {
	ctx := t.Context()
	dc := DefaultDevChainConfig()
	dc.Accounts = 1
	chain, err := StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	rc, err := rpc.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := DevEscrow(ctx, rc); !errors.Is(err, ErrNoContract) {
		t.Fatalf("dev chain without escrow: %v", err)
	}
}

// TestDevCallsOnOtherChains: an endpoint without the dev chain's methods
// (any other chain) gives ErrNotDevChain; one that is down, ErrUnreachable.
func TestDevCallsOnOtherChains(t *testing.T) {
	ctx := t.Context()
	srv := httptest.NewServer(rpc.NewServer())
	rc, err := rpc.DialContext(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := DevEscrow(ctx, rc); !errors.Is(err, ErrNotDevChain) {
		t.Fatalf("escrow from another chain: %v", err)
	}
	if _, err := DevFund(ctx, rc, common.Address{1}, big.NewInt(1)); !errors.Is(err, ErrNotDevChain) {
		t.Fatalf("fund from another chain: %v", err)
	}
	srv.Close()
	if _, err := DevEscrow(ctx, rc); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("escrow from a closed endpoint: %v", err)
	}
}

// TestDevChainHeartbeat: with no transactions the dev chain still seals
// blocks, so its clock follows the wall clock as a live chain's does.
func TestDevChainHeartbeat(t *testing.T) {
	ctx := t.Context()
	dc := DefaultDevChainConfig()
	dc.Accounts = 1
	dc.Heartbeat = 100 * time.Millisecond
	chain, err := StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	ec, err := ethclient.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	// The head keeps up with the wall clock: it reaches a time two
	// seconds past the test's start (the genesis block is older).
	start := uint64(time.Now().Unix())
	wait.Until(t, 30*time.Second, func() error {
		h, err := ec.HeaderByNumber(ctx, nil)
		if err != nil {
			return err
		}
		if h.Time < start+2 {
			return fmt.Errorf("head %d at %d, the test started at %d", h.Number, h.Time, start)
		}
		return nil
	})
	faucet := crypto.PubkeyToAddress(chain.Keys()[0].PublicKey)
	bal, err := ec.BalanceAt(ctx, faucet, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(dc.Balance) != 0 {
		t.Fatalf("empty blocks changed the faucet's balance: %v", bal)
	}
	if _, err := StartDevChain(ctx, DevChainConfig{Accounts: 1, Balance: big.NewInt(1), Logger: dc.Logger, Heartbeat: -1}); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("negative heartbeat: %v", err)
	}
}
