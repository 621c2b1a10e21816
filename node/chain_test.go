package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/escrow"
)

func TestChainSectionRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Chain = ChainConfig{RPC: "http://127.0.0.1:8545", Contract: "0x00000000000000000000000000000000000000e5", ChainID: 1337}
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
	if got.Chain != cfg.Chain {
		t.Fatalf("[chain] read back as %+v, wrote %+v", got.Chain, cfg.Chain)
	}
	cfg.Chain.Contract = "nope"
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("bad contract address: %v", err)
	}
	cfg.Chain = ChainConfig{}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("no chain: %v", err)
	}
}

func TestInitRepoWalletLoads(t *testing.T) {
	r := newTestRepo(t)
	if r.WalletKey == nil {
		t.Fatal("no wallet key loaded")
	}
	if got := WalletAddress(r.WalletKey); got != r.Config.Processor.Wallet {
		t.Fatalf("wallet key is %s, config names %s", got, r.Config.Processor.Wallet)
	}
}

// TestClientSectionTerms: [client] holds the escrow terms of the node's
// jobs; the file 'jobnode init' writes documents the defaults
// (escrow.DefaultTerms), a round trip keeps other values, and terms the
// contract would refuse are refused at load.
func TestClientSectionTerms(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.Client.Terms() != escrow.DefaultTerms() {
		t.Fatalf("default [client] terms %+v, want %+v", cfg.Client.Terms(), escrow.DefaultTerms())
	}
	b, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "[client]\n") || !strings.Contains(string(b), "quiet = '1m0s'") ||
		!strings.Contains(string(b), "min_signers = 2") {
		t.Fatalf("written config lacks the [client] defaults:\n%s", b)
	}
	cfg.Client = ClientConfig{Quiet: Duration(3 * time.Second), MinSigners: 1}
	if b, err = cfg.Encode(); err != nil {
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
	if got.Client != cfg.Client {
		t.Fatalf("[client] read back as %+v, wrote %+v", got.Client, cfg.Client)
	}
	for name, text := range map[string]string{
		"no signer":      "[client]\nmin_signers = 0\n",
		"negative quiet": "[client]\nquiet = \"-1s\"\n",
		"quiet too long": "[client]\nquiet = \"1200000h\"\n",
		"unknown key":    "[client]\nsigners = 2\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
}
