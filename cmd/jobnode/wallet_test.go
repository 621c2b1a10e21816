package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/node"
)

// fails runs jobnode, expects it to fail, and returns its output.
func fails(t *testing.T, args ...string) string {
	t.Helper()
	out, err := jobnode(args...).CombinedOutput()
	if err == nil {
		t.Fatalf("jobnode %s succeeded:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

func startTestDevChain(t *testing.T, cooldown time.Duration) *escrow.DevChain {
	t.Helper()
	dc := escrow.DefaultDevChainConfig()
	dc.Accounts = 3
	p := escrow.DefaultDeployParams()
	p.UnstakeCooldown = cooldown
	dc.Escrow = &p
	chain, err := escrow.StartDevChain(t.Context(), dc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	return chain
}

func balanceJSON(t *testing.T, repo, url string) walletBalance {
	t.Helper()
	var b walletBalance
	if err := json.Unmarshal([]byte(run(t, "wallet", "balance", "--repo", repo, "--eth-rpc", url, "--json")), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWalletAndStakeCommands runs the wallet and stake commands, each in
// its own process, against a dev chain given only by its URL: funding,
// staking, the cool-down, payouts withdrawn, and every refusal.
func TestWalletAndStakeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out an unstake cool-down")
	}
	const cooldown = 10 * time.Second
	chain := startTestDevChain(t, cooldown)
	url := chain.URL()
	repo := filepath.Join(t.TempDir(), "p")
	initRepo(t, repo)
	cfg, err := node.LoadConfig(filepath.Join(repo, node.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	addr := cfg.Processor.Wallet
	if got := strings.TrimSpace(run(t, "wallet", "address", "--repo", repo)); got != addr {
		t.Fatalf("wallet address %s, config %s", got, addr)
	}
	if out := fails(t, "wallet", "new", "--repo", repo); !strings.Contains(out, "already exists") {
		t.Fatalf("wallet new over wallet.key: %s", out)
	}
	if out := fails(t, "stake", "--repo", repo, "--eth-rpc", url, "--amount", "1e18"); !strings.Contains(out, "insufficient funds") {
		t.Fatalf("staking with no funds: %s", out)
	}
	if out := fails(t, "stake", "--repo", repo, "--eth-rpc", url, "--amount", "1.5"); !strings.Contains(out, "whole number of wei") {
		t.Fatalf("fractional wei: %s", out)
	}
	run(t, "wallet", "fund", "--repo", repo, "--eth-rpc", url, "--amount", "5000000000000000000")
	if b := balanceJSON(t, repo, url); b.Balance != "5000000000000000000" || b.Address != addr || b.Escrow != strings.ToLower(chain.Escrow().Hex()) {
		t.Fatalf("balance after funding: %+v", b)
	}

	run(t, "stake", "--repo", repo, "--eth-rpc", url, "--amount", "1e18")
	var st stakeStatus
	if err := json.Unmarshal([]byte(run(t, "stake", "status", "--repo", repo, "--eth-rpc", url, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Active != "1000000000000000000" || !st.Counted || st.Pending != "0" {
		t.Fatalf("stake after staking: %+v", st)
	}
	if out := fails(t, "stake", "unstake", "--repo", repo, "--eth-rpc", url, "--amount", "2e18"); !strings.Contains(out, "only 1000000000000000000 wei is active") {
		t.Fatalf("unstaking more than staked: %s", out)
	}
	if out := fails(t, "stake", "withdraw", "--repo", repo, "--eth-rpc", url); !strings.Contains(out, "no stake is cooling down") {
		t.Fatalf("withdrawing with nothing pending: %s", out)
	}
	run(t, "stake", "unstake", "--repo", repo, "--eth-rpc", url, "--amount", "1e18")
	if out := fails(t, "stake", "withdraw", "--repo", repo, "--eth-rpc", url); !strings.Contains(out, "cool-down not over") || !strings.Contains(out, "left") {
		t.Fatalf("withdrawing during the cool-down: %s", out)
	}
	// Once the cool-down is over the stake comes back.
	wait.Until(t, cooldown+time.Minute, func() error {
		out, err := jobnode("stake", "withdraw", "--repo", repo, "--eth-rpc", url).CombinedOutput()
		if err != nil {
			return fmt.Errorf("stake withdraw: %s", out)
		}
		return nil
	})
	if err := json.Unmarshal([]byte(run(t, "stake", "status", "--repo", repo, "--eth-rpc", url, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Active != "0" || st.Pending != "0" || st.Counted {
		t.Fatalf("stake after withdrawing: %+v", st)
	}

	checkCreditWithdraw(t, repo, url, cfg)
}

// checkCreditWithdraw has the repo's wallet create a job on the chain at
// url and abort it: the escrow credits the price back, and 'wallet
// withdraw' pays it out, conserving value.
func checkCreditWithdraw(t *testing.T, repo, url string, cfg node.Config) {
	t.Helper()
	if out := fails(t, "wallet", "withdraw", "--repo", repo, "--eth-rpc", url); !strings.Contains(out, "no credit") {
		t.Fatalf("withdrawing no credit: %s", out)
	}
	key, err := node.LoadWallet(repo, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c, closeC, err := node.OpenEscrow(ctx, node.ChainConfig{RPC: url}, key, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer closeC()
	price := big.NewInt(123_456_789)
	if _, err := c.CreateJob(ctx, common.Hash{0xab}, common.Hash{1}, time.Now().Add(time.Hour), escrow.Terms{MinSigners: 1}, price); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Abort(ctx, c.KeyOf(common.Hash{0xab})); err != nil {
		t.Fatal(err)
	}
	before := balanceJSON(t, repo, url)
	if before.Credit != price.String() {
		t.Fatalf("credit %s after the abort, want %s", before.Credit, price)
	}
	out := run(t, "wallet", "withdraw", "--repo", repo, "--eth-rpc", url)
	if !strings.Contains(out, "withdrew "+price.String()+" wei") {
		t.Fatalf("withdraw printed %s", out)
	}
	after := balanceJSON(t, repo, url)
	if after.Credit != "0" {
		t.Fatalf("credit %s after withdrawing", after.Credit)
	}
	// Value is conserved: the wallet gains the credit less the withdraw's
	// fee.
	var tx string
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "tx "); ok {
			tx = v
		}
	}
	ec, err := ethclient.DialContext(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	rcpt, err := ec.TransactionReceipt(ctx, common.HexToHash(tx))
	if err != nil {
		t.Fatalf("receipt of %q: %v", tx, err)
	}
	fee := new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice)
	b0, _ := new(big.Int).SetString(before.Balance, 10)
	b1, _ := new(big.Int).SetString(after.Balance, 10)
	if want := new(big.Int).Sub(new(big.Int).Add(b0, price), fee); b1.Cmp(want) != 0 {
		t.Fatalf("balance %s after withdrawing %s (fee %s) from %s, want %s", b1, price, fee, b0, want)
	}
}

func testLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestWalletImportAndKeystore: a repo made with another wallet's address
// imports a hex key from stdin; another imports a keystore file; the
// keystore wallet signs stakes with its passphrase from a file, and
// refuses to without it.
func TestWalletImportAndKeystore(t *testing.T) {
	chain := startTestDevChain(t, time.Hour)
	url := chain.URL()
	root := t.TempDir()

	key, err := ethcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	want := node.WalletAddress(key)
	hexRepo := filepath.Join(root, "hex")
	initRepo(t, hexRepo, "--wallet", "0x00000000000000000000000000000000000000c1")
	cmd := jobnode("wallet", "import", "-", "--repo", hexRepo)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("0x%x\n", ethcrypto.FromECDSA(key)))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("import hex: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(run(t, "wallet", "address", "--repo", hexRepo)); got != want {
		t.Fatalf("address after import %s, want %s", got, want)
	}
	badKey := filepath.Join(root, "bad.key")
	if err := os.WriteFile(badKey, []byte("0x1234"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := fails(t, "wallet", "import", badKey, "--repo", hexRepo); !strings.Contains(out, "64 hex digits") {
		t.Fatalf("import of a short key: %s", out)
	}

	ksRepo := filepath.Join(root, "ks")
	initRepo(t, ksRepo)
	ks, err := node.EncryptKeystore(key, "correct horse", true)
	if err != nil {
		t.Fatal(err)
	}
	ksFile := filepath.Join(root, "key.json")
	pwFile := filepath.Join(root, "pw")
	if err := os.WriteFile(ksFile, ks, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pwFile, []byte("correct horse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrongPw := filepath.Join(root, "wrong")
	if err := os.WriteFile(wrongPw, []byte("battery staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := fails(t, "wallet", "import", ksFile, "--repo", ksRepo, "--password-file", wrongPw); !strings.Contains(out, "wrong wallet passphrase") {
		t.Fatalf("import with the wrong passphrase: %s", out)
	}
	if out := run(t, "wallet", "import", ksFile, "--repo", ksRepo, "--password-file", pwFile); !strings.Contains(out, want) {
		t.Fatalf("import keystore printed %s", out)
	}
	if out := fails(t, "wallet", "new", "--keystore", "--light-kdf", "--repo", ksRepo, "--password-file", pwFile); !strings.Contains(out, "already exists") {
		t.Fatalf("a second keystore: %s", out)
	}
	run(t, "wallet", "fund", "--repo", ksRepo, "--eth-rpc", url, "--amount", "2e18")
	if out := fails(t, "stake", "--repo", ksRepo, "--eth-rpc", url, "--amount", "1e18"); !strings.Contains(out, "--password-file") {
		t.Fatalf("staking without the passphrase: %s", out)
	}
	cmd = jobnode("stake", "--repo", ksRepo, "--eth-rpc", url, "--amount", "1e18")
	cmd.Env = append(cmd.Env, passwordEnv+"=correct horse")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("staking with the passphrase from the environment: %v\n%s", err, out)
	}
	var st stakeStatus
	if err := json.Unmarshal([]byte(run(t, "stake", "status", "--repo", ksRepo, "--eth-rpc", url, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Address != want || st.Active != "1000000000000000000" {
		t.Fatalf("stake of the keystore wallet: %+v", st)
	}
	// A new keystore wallet in a third repo.
	newRepo := filepath.Join(root, "new")
	initRepo(t, newRepo, "--wallet", "0x00000000000000000000000000000000000000c1")
	out := run(t, "wallet", "new", "--keystore", "--light-kdf", "--repo", newRepo, "--password-file", pwFile)
	cfg, err := node.LoadConfig(filepath.Join(newRepo, node.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Wallet.Keystore != node.KeystoreFile || !strings.Contains(out, cfg.Processor.Wallet) {
		t.Fatalf("wallet new --keystore: config %+v, printed %s", cfg.Wallet, out)
	}
	k, err := node.LoadWallet(newRepo, cfg, func() (string, error) { return "correct horse", nil })
	if err != nil || node.WalletAddress(k) != cfg.Processor.Wallet {
		t.Fatalf("the new keystore opens as %v", err)
	}
}

// TestDaemonChainFlags: a processor given only --eth-rpc of a dev chain
// finds its escrow; one pointed at a chain that is down exits with a clear
// error.
func TestDaemonChainFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("daemon processes in -short mode")
	}
	chain := startTestDevChain(t, time.Hour)
	root := t.TempDir()
	repo := filepath.Join(root, "p")
	initRepo(t, repo)
	d := startDaemon(t, "process", repo, "--eth-rpc", chain.URL())
	d.stop(t)
	if out := fails(t, "process", "--repo", repo, "--eth-rpc", chain.URL(), "--escrow", "0x12"); !strings.Contains(out, "[chain] contract") {
		t.Fatalf("a bad --escrow: %s", out)
	}
	// A processor whose wallet is a keystore needs the passphrase.
	ksRepo := filepath.Join(root, "ks")
	initRepo(t, ksRepo, "--wallet", "0x00000000000000000000000000000000000000c1")
	pw := filepath.Join(root, "pw")
	if err := os.WriteFile(pw, []byte("correct horse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, "wallet", "new", "--keystore", "--light-kdf", "--repo", ksRepo, "--password-file", pw)
	if out := fails(t, "process", "--repo", ksRepo, "--eth-rpc", chain.URL()); !strings.Contains(out, passwordEnv) {
		t.Fatalf("a keystore processor without its passphrase: %s", out)
	}
	t.Setenv(passwordEnv, "battery staple")
	if out := fails(t, "process", "--repo", ksRepo, "--eth-rpc", chain.URL()); !strings.Contains(out, "wrong wallet passphrase") {
		t.Fatalf("a keystore processor with the wrong passphrase: %s", out)
	}
	t.Setenv(passwordEnv, "correct horse")
	startDaemon(t, "process", ksRepo, "--eth-rpc", chain.URL()).stop(t)

	// A chain endpoint that is down: the node retries, then says which.
	down := "http://127.0.0.1:1"
	if out := fails(t, "process", "--repo", repo, "--eth-rpc", down); !strings.Contains(out, down) || !strings.Contains(out, "unreachable") {
		t.Fatalf("a chain that is down: %s", out)
	}
}

func TestExampleWritesMandelbrotJob(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the example to WebAssembly")
	}
	dir := t.TempDir()
	var j exampleJob
	if err := json.Unmarshal([]byte(run(t, "example", "mandelbrot", "-o", dir, "--width", "64", "--height", "48", "--tile", "16", "--json")), &j); err != nil {
		t.Fatal(err)
	}
	if j.Blocks != 4*3 || j.Columns != 4 || j.BlockSize != 64 || j.Output != "png-grid" {
		t.Fatalf("example job %+v", j)
	}
	data, err := os.ReadFile(j.Data)
	if err != nil || len(data) != j.Blocks*j.BlockSize {
		t.Fatalf("data: %d bytes, %v", len(data), err)
	}
	code, err := os.ReadFile(j.Code)
	if err != nil || !strings.HasPrefix(string(code), "\x00asm") {
		t.Fatalf("code is not a WebAssembly module: %v", err)
	}
	if out := fails(t, "example", "nonsense", "-o", dir); !strings.Contains(out, "unknown example") {
		t.Fatalf("unknown example: %s", out)
	}
}
