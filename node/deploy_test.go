package node

import (
	"path/filepath"
	"testing"
)

// TestSetChainKeepsTheFile: SetChain writes [chain] and leaves the rest of
// the file as it was; a relative model_dir, resolved inside the repo once
// it is open, stays relative in the file.
func TestSetChainKeepsTheFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if err := InitRepo(dir, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cc := ChainConfig{RPC: "http://127.0.0.1:8545", Contract: "0x00000000000000000000000000000000000000e5", ChainID: 1337}
	if err := r.SetChain(cc); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if got.Chain != cc || r.Config.Chain != cc {
		t.Fatalf("[chain]: file %+v, open repo %+v, want %+v", got.Chain, r.Config.Chain, cc)
	}
	if got.Processor.ModelDir != DefaultModelDir || r.Config.Processor.ModelDir != filepath.Join(dir, DefaultModelDir) {
		t.Fatalf("model_dir: file %q, open repo %q", got.Processor.ModelDir, r.Config.Processor.ModelDir)
	}
	if got.Processor.CompileCacheDir != DefaultCompileCacheDir || r.Config.Processor.CompileCacheDir != filepath.Join(dir, DefaultCompileCacheDir) {
		t.Fatalf("compile_cache_dir: file %q, open repo %q", got.Processor.CompileCacheDir, r.Config.Processor.CompileCacheDir)
	}
	if pc := r.Config.ProcessorConfig(); pc.Wasm.CacheDir != filepath.Join(dir, DefaultCompileCacheDir) {
		t.Fatalf("the executor's cache directory %q, want the repo's", pc.Wasm.CacheDir)
	}
	bad := cc
	bad.Contract = "0x12"
	if err := r.SetChain(bad); err == nil {
		t.Fatal("SetChain took a contract that is not an address")
	}
}
