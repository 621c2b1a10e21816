package node

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/models"
	"github.com/jobmesh/jobmesh/p2p"
)

const (
	listedModel = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	diskModel   = "bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq"
)

// TestModelConfig: model_dir and max_model_bytes round-trip through the
// config file, a relative model_dir is resolved inside the repo, and a
// non-positive budget is refused.
func TestModelConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Processor.MaxModelBytes = 12345
	if err := InitRepo(dir, cfg); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Config.Processor.MaxModelBytes != 12345 || r.Config.Processor.ModelDir != filepath.Join(dir, DefaultModelDir) {
		t.Fatalf("model settings: %q, %d", r.Config.Processor.ModelDir, r.Config.Processor.MaxModelBytes)
	}
	p := filepath.Join(t.TempDir(), ConfigFile)
	if err := writeFileAtomic(p, []byte("[processor]\nmax_model_bytes = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(p); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("zero budget: %v", err)
	}
	abs := DefaultConfig()
	abs.Processor.ModelDir = "/srv/models"
	dir2 := t.TempDir()
	if err := InitRepo(dir2, abs); err != nil {
		t.Fatal(err)
	}
	r2, err := OpenRepo(dir2)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.Config.Processor.ModelDir != "/srv/models" {
		t.Fatalf("absolute model_dir became %q", r2.Config.Processor.ModelDir)
	}
}

// TestProcessorAdvertisesModelsOnDisk: a processor advertises the models
// in its model store at start together with the listed ones, and one it
// fetches by CID joins its advertisement and its store.
func TestProcessorAdvertisesModelsOnDisk(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Processor.Models = []string{listedModel}
	if err := InitRepo(dir, cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, DefaultModelDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DefaultModelDir, diskModel), []byte("weights"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startProcessor(t, dir)
	advertised := func() ([]string, error) {
		ads, err := n.Processors(ctx)
		if err != nil {
			return nil, err
		}
		if len(ads) != 1 {
			return nil, fmt.Errorf("%d advertisements", len(ads))
		}
		return ads[0].Models, nil
	}
	if got, err := advertised(); err != nil || !slices.Equal(got, []string{diskModel, listedModel}) {
		t.Fatalf("advertised models %v (%v)", got, err)
	}

	content := bytes.Repeat([]byte("model "), 50_000)
	c, err := n.IPFS.AddFile(ctx, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.FetchModel(ctx, c.String()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, DefaultModelDir, c.String())); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("stored model: %d bytes, %v", len(got), err)
	}
	wait.Until(t, 10*time.Second, func() error {
		got, err := advertised()
		if err != nil {
			return err
		}
		if !slices.Contains(got, c.String()) {
			return fmt.Errorf("advertised %v", got)
		}
		return nil
	})
	if err := n.FetchModel(ctx, "not-a-cid"); !errors.Is(err, models.ErrBadCID) {
		t.Fatalf("bad CID: %v", err)
	}
}

// startProcessor starts a processor node on the repo in dir, stopped at
// the end of the test.
func startProcessor(t *testing.T, dir string) *Node {
	t.Helper()
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	dstore, err := pebbleds.NewDatastore(filepath.Join(dir, DatastoreDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dstore.Close() })
	pcfg := p2p.LoopbackConfig()
	n, err := New(t.Context(), Params{Role: RoleProcessor, Config: r.Config, Identity: r.Identity, Datastore: dstore, P2P: &pcfg, WalletKey: r.WalletKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// TestFetchModelOverBudget: a model larger than what is left of
// max_model_bytes is refused with a clear error; nothing is stored or
// advertised, and a model that fits exactly still is.
func TestFetchModelOverBudget(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Processor.MaxModelBytes = 100_000
	if err := InitRepo(dir, cfg); err != nil {
		t.Fatal(err)
	}
	n := startProcessor(t, dir)
	large, err := n.IPFS.AddFile(ctx, bytes.NewReader(bytes.Repeat([]byte("b"), 300_000)))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.FetchModel(ctx, large.String()); !errors.Is(err, models.ErrStoreFull) {
		t.Fatalf("over budget: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, DefaultModelDir)); len(entries) != 0 {
		t.Fatalf("the store kept %v", entries)
	}
	fits, err := n.IPFS.AddFile(ctx, bytes.NewReader(bytes.Repeat([]byte("s"), 100_000)))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.FetchModel(ctx, fits.String()); err != nil {
		t.Fatalf("exactly the budget: %v", err)
	}
	ads, err := n.Processors(ctx)
	if err != nil || len(ads) != 1 || !slices.Equal(ads[0].Models, []string{fits.String()}) {
		t.Fatalf("advertised %+v (%v)", ads, err)
	}
}
