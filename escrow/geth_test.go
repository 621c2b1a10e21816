package escrow

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

// TestGethDev runs the escrow against a real `geth --dev` named by
// JOBMESH_GETH (scripts/escrow-geth.sh installs one and sets it): deploy,
// stake, create, join, settle, poll for release; a non-member's settle and
// an abort after a join revert there as on the simulated chain.
func TestGethDev(t *testing.T) {
	gethBin := os.Getenv("JOBMESH_GETH")
	if gethBin == "" {
		t.Skip("JOBMESH_GETH is not set; scripts/escrow-geth.sh installs geth and runs this test")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	ec, dumpLog := startGethDev(ctx, t, gethBin)

	chainID := big.NewInt(DevChainID)
	cfg := testConfig()
	cfg.Retry = Retry{Attempts: 6, Initial: 50 * time.Millisecond, Max: time.Second}
	cfg.ReleasePoll = 50 * time.Millisecond
	params := DefaultDeployParams()
	params.MinStake = big.NewInt(1e15)
	dapp, _, err := Deploy(ctx, ec, bind.NewKeyedTransactor(DevKey(0), chainID), params, cfg)
	if err != nil {
		dumpLog()
		t.Fatalf("deploy on geth: %v", err)
	}
	cfg.Contract = dapp.Address()
	cfg.ChainID = chainID

	var procs []*Client
	pay := map[common.Address]*big.Int{}
	for i := 1; i <= 3; i++ {
		fund(t, ctx, dapp, ec, crypto.PubkeyToAddress(DevKey(i).PublicKey), ether(1))
		p, err := New(ctx, ec, bind.NewKeyedTransactor(DevKey(i), chainID), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Stake(ctx, big.NewInt(1e15)); err != nil {
			t.Fatalf("stake on geth: %v", err)
		}
		procs = append(procs, p)
		pay[p.From()] = big.NewInt(1e14)
	}

	hd, err := ec.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	jobID, seed := common.Hash{0x6e}, common.Hash{0x5e}
	terms := Terms{MinSigners: 2}
	if _, err := dapp.CreateJob(ctx, jobID, SeedCommitment(seed), time.Unix(int64(hd.Time), 0).Add(time.Hour), terms, big.NewInt(5e14)); err != nil {
		t.Fatalf("create on geth: %v", err)
	}
	key := dapp.KeyOf(jobID)
	s := NewSettlement(key, seed, common.Hash{0xa}, common.Hash{0xb}, pay, nil)
	var sigs []SignedBy
	for j, p := range procs {
		sig, err := SignSettlement(DevKey(j+1), p.Domain(), s)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, SignedBy{Signer: p.From(), Signature: sig})
	}
	// Before anyone joins, the signatures are worth nothing.
	_, err = procs[0].Settle(ctx, s, sigs)
	expectRevert(t, err, ErrNoMembers, "NoMembers")
	for _, p := range procs {
		if _, err := p.Join(ctx, key); err != nil {
			t.Fatalf("join on geth: %v", err)
		}
	}
	_, err = dapp.Abort(ctx, key)
	expectRevert(t, err, ErrWorkStarted, "WorkStarted")
	if _, err := procs[0].Settle(ctx, s, sigs); err != nil {
		t.Fatalf("settle on geth: %v", err)
	}
	rel, err := dapp.WaitReleased(ctx, key)
	if err != nil {
		t.Fatalf("wait released on geth: %v", err)
	}
	if len(rel.Payees) != 3 || rel.Refund.Cmp(big.NewInt(2e14)) != 0 {
		t.Fatalf("release %+v", rel)
	}
	if cr, err := dapp.CreditOf(ctx, procs[1].From()); err != nil || cr.Cmp(big.NewInt(1e14)) != 0 {
		t.Fatalf("credit %v, %v", cr, err)
	}
	if _, err := procs[1].Withdraw(ctx); err != nil {
		t.Fatalf("withdraw on geth: %v", err)
	}
	// A revert on a real node is decoded the same way.
	_, err = dapp.Refund(ctx, key)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
}

// startGethDev starts gethBin in --dev mode with dev key 0 funded, stops
// it when the test ends, and returns a client of its HTTP endpoint, once it
// answers, and a function that logs geth's log.
func startGethDev(ctx context.Context, t *testing.T, gethBin string) (*ethclient.Client, func()) {
	t.Helper()
	// geth --dev funds the first keystore account; put dev key 0 there.
	datadir := t.TempDir()
	ks := keystore.NewKeyStore(filepath.Join(datadir, "keystore"), keystore.LightScryptN, keystore.LightScryptP)
	if _, err := ks.ImportECDSA(DevKey(0), ""); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(gethBin, "--dev", "--dev.period", "0", "--datadir", datadir, "--password", pwFile,
		"--http", "--http.addr", "127.0.0.1", "--http.port", strconv.Itoa(port), "--http.api", "eth,net,web3",
		"--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", "0", "--authrpc.port", strconv.Itoa(freePort(t)),
		"--verbosity", "2")
	logFile, err := os.Create(filepath.Join(t.TempDir(), "geth.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	dumpLog := func() {
		if b, err := os.ReadFile(logFile.Name()); err == nil {
			t.Logf("geth log:\n%s", b)
		}
	}

	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	ec, err := ethclient.DialContext(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ec.Close)
	// Wait until geth answers, with a deadline; fail early if it exited.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if id, err := ec.ChainID(ctx); err == nil {
			if id.Int64() != DevChainID {
				t.Fatalf("geth --dev chain ID %v", id)
			}
			break
		}
		select {
		case err := <-exited:
			dumpLog()
			t.Fatalf("geth exited: %v", err)
		case <-ctx.Done():
			dumpLog()
			t.Fatal("geth did not answer in time")
		case <-tick.C:
		}
	}
	return ec, dumpLog
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// fund sends value from the client's account to addr and waits for it.
func fund(t *testing.T, ctx context.Context, c *Client, ec *ethclient.Client, to common.Address, value *big.Int) {
	t.Helper()
	nonce, err := ec.PendingNonceAt(ctx, c.From())
	if err != nil {
		t.Fatal(err)
	}
	tip, err := ec.SuggestGasTipCap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hd, err := ec.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(hd.BaseFee, big.NewInt(2)))
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: c.ChainID(), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: 21000, To: &to, Value: value})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(c.ChainID()), DevKey(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := ec.SendTransaction(ctx, signed); err != nil {
		t.Fatal(err)
	}
	if _, err := c.waitReceipt(ctx, signed.Hash()); err != nil {
		t.Fatal(err)
	}
}
