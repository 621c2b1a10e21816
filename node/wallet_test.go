package node

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/jobmesh/jobmesh/escrow"
)

func pass(s string) Passphrase { return func() (string, error) { return s, nil } }

func initRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := InitRepo(dir, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestKeystoreWalletInstallAndUnlock(t *testing.T) {
	dir := initRepo(t)
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	rawAddr := r.Config.Processor.Wallet
	key, err := ethcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	ks, err := EncryptKeystore(key, "correct horse", true)
	if err != nil {
		t.Fatal(err)
	}
	// A wrong passphrase writes nothing.
	if _, err := r.InstallKeystoreWallet(ks, "battery staple"); !errors.Is(err, ErrBadPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeystoreFile)); err == nil {
		t.Fatal("a keystore refused for its passphrase was written")
	}
	if _, err := r.InstallKeystoreWallet([]byte("{not json"), "x"); !errors.Is(err, ErrBadWallet) {
		t.Fatalf("garbage keystore: %v", err)
	}
	if cfg, err := LoadConfig(filepath.Join(dir, ConfigFile)); err != nil || cfg.Processor.Wallet != rawAddr || cfg.Wallet.Keystore != "" {
		t.Fatalf("refused installs changed the config: %+v %v", cfg.Wallet, err)
	}
	got, err := r.InstallKeystoreWallet(ks, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if WalletAddress(got) != WalletAddress(key) {
		t.Fatalf("installed %s, want %s", WalletAddress(got), WalletAddress(key))
	}
	other, err := EncryptKeystore(key, "x", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.InstallKeystoreWallet(other, "x"); !errors.Is(err, ErrWalletExists) {
		t.Fatalf("second keystore: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, KeystoreFile)); err != nil || !bytes.Equal(b, ks) {
		t.Fatalf("the keystore file changed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, WalletFile)); err != nil {
		t.Fatalf("the raw key was removed: %v", err)
	}
	r.Close()

	r, err = OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Config.Wallet.Keystore != KeystoreFile || r.Config.Processor.Wallet != WalletAddress(key) {
		t.Fatalf("config after install: [wallet] %+v, [processor] wallet %s", r.Config.Wallet, r.Config.Processor.Wallet)
	}
	if r.WalletKey != nil {
		t.Fatal("a keystore wallet was loaded without its passphrase")
	}
	if err := r.UnlockWallet(nil); !errors.Is(err, ErrNoPassphrase) {
		t.Fatalf("no passphrase: %v", err)
	}
	if err := r.UnlockWallet(pass("nope")); !errors.Is(err, ErrBadPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	wantErr := errors.New("no terminal")
	if err := r.UnlockWallet(func() (string, error) { return "", wantErr }); !errors.Is(err, wantErr) {
		t.Fatalf("passphrase source error: %v", err)
	}
	if err := r.UnlockWallet(pass("correct horse")); err != nil {
		t.Fatal(err)
	}
	if !r.WalletKey.Equal(key) {
		t.Fatal("unlocked a different key")
	}
}

func TestRawWalletRefusesOverwrite(t *testing.T) {
	dir := initRepo(t)
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, err := os.ReadFile(filepath.Join(dir, WalletFile))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ethcrypto.GenerateKey()
	if err := r.InstallRawWallet(key); !errors.Is(err, ErrWalletExists) {
		t.Fatalf("overwriting wallet.key: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, WalletFile))
	if !bytes.Equal(before, after) {
		t.Fatal("wallet.key changed")
	}

	// A repo made with another wallet's address has no key; one can be
	// installed, and it becomes the payout address.
	dir2 := t.TempDir()
	cfg := DefaultConfig()
	cfg.Processor.Wallet = "0x00000000000000000000000000000000000000c1"
	if err := InitRepo(dir2, cfg); err != nil {
		t.Fatal(err)
	}
	r2, err := OpenRepo(dir2)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.WalletKey != nil {
		t.Fatal("a key for a foreign address")
	}
	if err := r2.InstallRawWallet(key); err != nil {
		t.Fatal(err)
	}
	r2.Close()
	cfg2, err := LoadConfig(filepath.Join(dir2, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	k, err := LoadWallet(dir2, cfg2, nil)
	if err != nil || k == nil || !k.Equal(key) {
		t.Fatalf("installed raw key loads as %v, %v", k, err)
	}
}

func TestLoadWalletRefusesAnotherAddress(t *testing.T) {
	dir := initRepo(t)
	cfg, err := LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Processor.Wallet = "0x00000000000000000000000000000000000000c1"
	if _, err := LoadWallet(dir, cfg, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("key for another address: %v", err)
	}
	cfg.Wallet.Keystore = "missing.json"
	if _, err := LoadWallet(dir, cfg, pass("x")); !errors.Is(err, ErrBadWallet) {
		t.Fatalf("missing keystore: %v", err)
	}
}

func TestWalletSectionInConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Wallet.Keystore = "keys/me.json"
	b, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ConfigFile)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Wallet != cfg.Wallet {
		t.Fatalf("[wallet] read back as %+v", got.Wallet)
	}
	if p := got.Wallet.KeystorePath("/repo"); p != "/repo/keys/me.json" {
		t.Fatalf("keystore path %s", p)
	}
	bad := strings.Replace(string(b), "\n[wallet]\n", "\n[wallet]\npassword = 'hunter2'\n", 1)
	if bad == string(b) {
		t.Fatal("no [wallet] section in the encoded config")
	}
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("unknown [wallet] key: %v", err)
	}
	// An rpc without a contract is valid: the dev chain tells its escrow.
	cfg.Chain = ChainConfig{RPC: "http://127.0.0.1:8545"}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("rpc without contract: %v", err)
	}
}

func TestParseKeyHex(t *testing.T) {
	key, _ := ethcrypto.GenerateKey()
	hex := []byte(" 0x" + strings.ToUpper(strings.TrimPrefix(hexOf(key), "0x")) + "\n")
	got, err := ParseKeyHex(hex)
	if err != nil || !got.Equal(key) {
		t.Fatalf("parse: %v", err)
	}
	for _, bad := range []string{"", "0x12", strings.Repeat("zz", 32), strings.Repeat("00", 32)} {
		if _, err := ParseKeyHex([]byte(bad)); !errors.Is(err, ErrBadWallet) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func hexOf(k *ecdsa.PrivateKey) string { return fmt.Sprintf("0x%x", ethcrypto.FromECDSA(k)) }

func FuzzParseKeyHex(f *testing.F) {
	f.Add([]byte("0x" + strings.Repeat("11", 32)))
	f.Add([]byte(strings.Repeat("ff", 32)))
	f.Add([]byte("0x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKeyHex(b)
		if err != nil {
			if !errors.Is(err, ErrBadWallet) {
				t.Fatalf("error not ErrBadWallet: %v", err)
			}
			return
		}
		again, err := ParseKeyHex([]byte(hexOf(k)))
		if err != nil || !again.Equal(k) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// TestDialChainLearnsDevEscrow: with only the dev chain's URL, a node finds
// the escrow; another endpoint without a contract is a clear config error.
func TestDialChainLearnsDevEscrow(t *testing.T) {
	ctx := t.Context()
	dc := escrow.DefaultDevChainConfig()
	dc.Accounts = 2
	params := escrow.DefaultDeployParams()
	dc.Escrow = &params
	chain, err := escrow.StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	ch, closeFn, err := DialChain(ctx, ChainConfig{RPC: chain.URL()})
	if err != nil {
		t.Fatal(err)
	}
	closeFn()
	if ch.Contract != chain.Escrow() {
		t.Fatalf("learned escrow %s, the dev chain has %s", ch.Contract, chain.Escrow())
	}

	// A key funded by the faucet stakes through OpenEscrow; a read-only
	// client sees the stake.
	key, _ := ethcrypto.GenerateKey()
	addr := ethcrypto.PubkeyToAddress(key.PublicKey)
	rc, err := rpc.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := escrow.DevFund(ctx, rc, addr, big.NewInt(5e18)); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	c, closeC, err := OpenEscrow(ctx, ChainConfig{RPC: chain.URL()}, key, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeC()
	if _, err := c.Stake(ctx, params.MinStake); err != nil {
		t.Fatal(err)
	}
	ro, closeRO, err := OpenEscrow(ctx, ChainConfig{RPC: chain.URL(), Contract: strings.ToLower(chain.Escrow().Hex()), ChainID: escrow.DevChainID}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeRO()
	st, err := ro.StakeOf(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if st.Active.Cmp(params.MinStake) != 0 {
		t.Fatalf("stake %v, staked %v", st.Active, params.MinStake)
	}
	if _, err := ro.Stake(ctx, big.NewInt(1)); !errors.Is(err, escrow.ErrNoSigner) {
		t.Fatalf("read-only client staking: %v", err)
	}
	if _, _, err := OpenEscrow(ctx, ChainConfig{RPC: chain.URL(), ChainID: 137}, nil, log); !errors.Is(err, escrow.ErrWrongChain) {
		t.Fatalf("wrong chain ID: %v", err)
	}

	// Any other endpoint cannot tell an escrow.
	srv := httptest.NewServer(rpc.NewServer())
	defer srv.Close()
	if _, _, err := DialChain(ctx, ChainConfig{RPC: srv.URL}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("no contract, not a dev chain: %v", err)
	}
}

func TestDialChainUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the retry backoff")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	_, _, err = DialChain(context.Background(), ChainConfig{RPC: url})
	if !errors.Is(err, escrow.ErrUnreachable) || !strings.Contains(err.Error(), url) {
		t.Fatalf("down endpoint: %v", err)
	}
}
