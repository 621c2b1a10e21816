package node

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"

	"github.com/jobmesh/jobmesh/internal/wait"
)

func validAdvert() Advert {
	return Advert{
		PeerID: "12D3KooWQb4GxXhyz31YNwUzUEvMEqMpSjxegB5pSXxPtsY7Yro1", Role: RoleProcessor,
		CardModel: "rtx4090", VRAMMiB: 24576, CPUs: 8, Models: []string{},
		Wallet: "0x00000000000000000000000000000000000000aa", Version: Version,
		Addrs:          []string{"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWQb4GxXhyz31YNwUzUEvMEqMpSjxegB5pSXxPtsY7Yro1"},
		ProcessTimeout: 300, Updated: time.Unix(1700000000, 0).UTC(),
	}
}

func TestDecodeAdvert(t *testing.T) {
	b, _ := json.Marshal(validAdvert())
	a, err := DecodeAdvert(b)
	if err != nil || a.CardModel != "rtx4090" {
		t.Fatalf("valid advert: %v %+v", err, a)
	}
	bad := map[string]string{
		"unknown field": strings.Replace(string(b), `"cpus"`, `"cores":1,"cpus"`, 1),
		"trailing":      string(b) + "{}",
		"no cpus":       strings.Replace(string(b), `"cpus":8`, `"cpus":0`, 1),
		"bad wallet":    strings.Replace(string(b), `0x00000000000000000000000000000000000000aa`, `0xzz`, 1),
		"oversized":     string(b[:len(b)-1]) + `,"x":"` + strings.Repeat("a", MaxAdvertSize) + `"}`,
		"not json":      "{",
	}
	for name, in := range bad {
		if _, err := DecodeAdvert([]byte(in)); !errors.Is(err, ErrBadAdvert) {
			t.Errorf("%s: got %v, want ErrBadAdvert", name, err)
		}
	}
}

func FuzzDecodeAdvert(f *testing.F) {
	b, _ := json.Marshal(validAdvert())
	f.Add(b)
	f.Add([]byte(`{"peer_id":"x","cpus":1,"card_model":"cpu"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := DecodeAdvert(in)
		if err != nil {
			if !errors.Is(err, ErrBadAdvert) {
				t.Fatalf("error %v does not wrap ErrBadAdvert", err)
			}
			return
		}
		// Whatever decodes re-encodes and decodes to the same value.
		again, _ := json.Marshal(a)
		b, err := DecodeAdvert(again)
		if err != nil || b.PeerID != a.PeerID || b.CPUs != a.CPUs {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestConfigRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.P2P.Bootstrap = []string{"/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWQb4GxXhyz31YNwUzUEvMEqMpSjxegB5pSXxPtsY7Yro1"}
	cfg.Processor.Models = []string{"bafy-model"}
	if err := InitRepo(dir, cfg); err != nil {
		t.Fatal(err)
	}
	if err := InitRepo(dir, cfg); !errors.Is(err, ErrRepoExists) {
		t.Fatalf("second init: %v", err)
	}
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Config.P2P.Bootstrap[0] != cfg.P2P.Bootstrap[0] || r.Config.Processor.Models[0] != "bafy-model" ||
		r.Config.Store.Rebroadcast != cfg.Store.Rebroadcast || r.Config.Store.AnnounceWait != cfg.Store.AnnounceWait ||
		r.Config.P2P.MeshDegree != cfg.P2P.MeshDegree || cfg.P2P.MeshDegree == 0 {
		t.Fatalf("config did not round-trip: %+v", r.Config)
	}
	if _, err := OpenRepo(dir); !errors.Is(err, ErrRepoLocked) {
		t.Fatalf("second open: %v, want ErrRepoLocked", err)
	}
	if _, err := OpenRepo(t.TempDir()); !errors.Is(err, ErrNoRepo) {
		t.Fatalf("open empty dir: %v", err)
	}
}

func TestConfigRejectsUnknownKeysAndBadValues(t *testing.T) {
	for name, text := range map[string]string{
		"unknown key": "[p2p]\nlisten_addrs = []\n",
		"bad dht":     "[p2p]\ndht_mode = \"maybe\"\n",
		"bad wallet":  "[processor]\nwallet = \"me\"\n",
		"bad dur":     "[store]\nrebroadcast = \"soon\"\n",
		"mesh degree": "[p2p]\nmesh_degree = 1\n",
		"long wait":   "[store]\nannounce_wait = \"1h\"\n",
		"neg wait":    "[store]\nannounce_wait = \"-1s\"\n",
	} {
		p := t.TempDir() + "/config.toml"
		if err := writeFileAtomic(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(p); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
}

// TestProcessorBindsItsWallet starts a processor with a wallet key: its
// binding is in the store at start, verifies, names its wallet, is not
// written again while it holds, and is written again once it is gone.
func TestProcessorBindsItsWallet(t *testing.T) {
	ctx := context.Background()
	r, err := OpenRepo(initRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cfg := r.Config
	cfg.Processor.AdvertiseEvery = Duration(time.Second)
	pcfg := p2p.LoopbackConfig()
	n, err := New(ctx, Params{Role: RoleProcessor, Config: cfg, Identity: r.Identity, Datastore: dssync.MutexWrap(ds.NewMapDatastore()),
		P2P: &pcfg, WalletKey: r.WalletKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	key := records.WalletBindingKey(n.Host.ID().String())
	rec, err := n.Store.Get(ctx, key)
	if err != nil {
		t.Fatalf("no binding after start: %v", err)
	}
	wb, err := records.OpenWalletBinding(rec)
	if err != nil || wb.Wallet != WalletAddress(r.WalletKey) || wb.Wallet != cfg.Processor.Wallet {
		t.Fatalf("binding %+v, %v; wallet %s", wb, err, cfg.Processor.Wallet)
	}
	if err := n.BindWallet(ctx); err != nil {
		t.Fatal(err)
	}
	if again, err := n.Store.Get(ctx, key); err != nil || again.Seq != rec.Seq {
		t.Fatalf("a valid binding was written again (seq %d, was %d): %v", again.Seq, rec.Seq, err)
	}
	if err := n.Store.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, func() error {
		rec, err := n.Store.Get(ctx, key)
		if err != nil {
			return err
		}
		_, err = records.OpenWalletBinding(rec)
		return err
	})
}

// TestAdvertisedWalletIsTheBoundOne: on a node with a chain, a processor
// that advertises another processor's wallet (to be weighted by its
// stake) is listed with no wallet, and a bound processor with its bound
// wallet; a node without a chain lists advertisements as written.
func TestAdvertisedWalletIsTheBoundOne(t *testing.T) {
	ctx := context.Background()
	sim, err := escrow.NewSimChain(escrow.DefaultDevChainConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	esc, _, err := escrow.Deploy(ctx, sim.Client(), sim.Transactor(0), escrow.DefaultDeployParams(), escrow.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	start := func(cfg Config, r *Repo, chain *Chain, key *ecdsa.PrivateKey, bootstrap []string) *Node {
		t.Helper()
		pcfg := p2p.LoopbackConfig()
		pcfg.Bootstrap = bootstrap
		n, err := New(ctx, Params{Role: RoleProcessor, Config: cfg, Identity: r.Identity, Datastore: dssync.MutexWrap(ds.NewMapDatastore()),
			P2P: &pcfg, Chain: chain, WalletKey: key, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	open := func() *Repo {
		r, err := OpenRepo(initRepo(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	honestRepo, liarRepo := open(), open()
	honest := start(honestRepo.Config, honestRepo, &Chain{Backend: sim.Client(), Contract: esc.Address()}, honestRepo.WalletKey, nil)
	var addrs []string
	for _, a := range honest.Host.FullAddrs() {
		addrs = append(addrs, a.String())
	}
	// The liar has no wallet key and advertises the honest wallet.
	claim := liarRepo.Config
	claim.Processor.Wallet = honestRepo.Config.Processor.Wallet
	liar := start(claim, liarRepo, nil, nil, addrs)

	wallets := func(n *Node) (map[string]string, error) {
		ads, err := n.Processors(ctx)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, a := range ads {
			out[a.PeerID] = a.Wallet
		}
		if len(out) != 2 {
			return nil, fmt.Errorf("%d processors listed", len(out))
		}
		return out, nil
	}
	hid, lid := honest.Host.ID().String(), liar.Host.ID().String()
	wait.Until(t, 30*time.Second, func() error {
		got, err := wallets(honest)
		if err != nil {
			return err
		}
		if got[hid] != honestRepo.Config.Processor.Wallet || got[lid] != "" {
			return fmt.Errorf("the chain node lists wallets %v", got)
		}
		return nil
	})
	wait.Until(t, 30*time.Second, func() error {
		got, err := wallets(liar)
		if err != nil {
			return err
		}
		if got[lid] != honestRepo.Config.Processor.Wallet {
			return fmt.Errorf("the chain-less node lists wallets %v", got)
		}
		return nil
	})
}
