package node

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
