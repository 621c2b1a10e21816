package node

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

func TestDialsAll(t *testing.T) {
	for _, c := range []struct {
		advertised, limit int
		want              bool
	}{
		{1, 32, true}, {32, 32, true}, {33, 32, false}, {100, 32, false},
		{1, 0, false}, {3, 2, false}, {2, 2, true},
	} {
		if got := dialsAll(c.advertised, c.limit); got != c.want {
			t.Errorf("dialsAll(%d advertised, limit %d) = %v, want %v", c.advertised, c.limit, got, c.want)
		}
	}
}

func TestDialAllBelowValidated(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.P2P.DialAllBelow != DefaultDialAllBelow {
		t.Fatalf("default dial_all_below %d", cfg.P2P.DialAllBelow)
	}
	cfg.P2P.DialAllBelow = -1
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("dial_all_below -1: %v, want ErrInvalidConfig", err)
	}
	cfg.P2P.DialAllBelow = 0
	if err := cfg.Validate(); err != nil {
		t.Fatalf("dial_all_below 0: %v", err)
	}
}

// TestDialAdvertisedOnlyInSmallMesh: three processors on real hosts, two
// of them knowing only the first (their bootstrap peer). Under a limit
// of 32 a node dials an advertised processor it is not connected to;
// under a limit of 2, three advertised processors are a mesh too large to
// dial: it dials none. Only the node connected to every advertised
// processor pauses topic discovery.
func TestDialAdvertisedOnlyInSmallMesh(t *testing.T) {
	ctx := context.Background()
	start := func(limit int, bootstrap []string) *Node { return startDialler(t, limit, bootstrap) }
	first := start(32, nil)
	addrs := fullAddrs(first.Host)
	small, large := start(32, addrs), start(2, addrs)
	for _, n := range []*Node{small, large} {
		wait.Until(t, 30*time.Second, func() error {
			ads, err := n.Processors(ctx)
			if err != nil {
				return err
			}
			if len(ads) != 3 {
				return fmt.Errorf("%s knows %d advertised processors, want 3", n.Host.ID(), len(ads))
			}
			return nil
		})
	}

	// The small-mesh node dials the other one once disconnected from it
	// (the DHT may connect them again first: then try again).
	wait.Until(t, 30*time.Second, func() error {
		_ = small.Host.Network().ClosePeer(large.Host.ID())
		if r := small.dialAdvertised(ctx, map[peer.ID]*p2p.Backoff{}); !r.all || !slices.Contains(r.reached, large.Host.ID()) {
			return fmt.Errorf("under the limit, dialled %v, not %s", r.reached, large.Host.ID())
		}
		return nil
	})
	if !small.Host.Connected(large.Host.ID()) {
		t.Fatal("dialled but not connected")
	}
	// Connected to every advertised processor, the small-mesh node keeps
	// its topics off the DHT; the other one, above its limit, does not.
	wait.Until(t, 30*time.Second, func() error {
		if !small.Host.TopicDiscoveryPaused() {
			return fmt.Errorf("the small-mesh node, connected to every processor, still uses the DHT for topics")
		}
		return nil
	})
	if large.Host.TopicDiscoveryPaused() {
		t.Fatal("above the limit, topic discovery is paused")
	}

	_ = large.Host.Network().ClosePeer(small.Host.ID())
	_ = large.Host.Network().ClosePeer(first.Host.ID())
	if r := large.dialAdvertised(ctx, map[peer.ID]*p2p.Backoff{}); r.all || len(r.reached) != 0 {
		t.Fatalf("above the limit, dialled %v", r.reached)
	}
}

// startDialler starts a processor node on a fresh repo and an in-memory
// datastore, with [p2p] dial_all_below = limit.
func startDialler(t *testing.T, limit int, bootstrap []string) *Node {
	t.Helper()
	return startDiallerWith(t, limit, bootstrap, nil)
}

// startDiallerWith is startDialler with the config also passed through
// configure.
func startDiallerWith(t *testing.T, limit int, bootstrap []string, configure func(*Config)) *Node {
	t.Helper()
	r, err := OpenRepo(initRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	cfg := r.Config
	cfg.P2P.DialAllBelow = limit
	if configure != nil {
		configure(&cfg)
	}
	pcfg := p2p.LoopbackConfig()
	pcfg.Bootstrap = bootstrap
	n, err := New(context.Background(), Params{Role: RoleProcessor, Config: cfg, Identity: r.Identity, Datastore: dssync.MutexWrap(ds.NewMapDatastore()),
		P2P: &pcfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func fullAddrs(h *p2p.Host) []string {
	var out []string
	for _, a := range h.FullAddrs() {
		out = append(out, a.String())
	}
	return out
}

// TestAdvertNamingAnotherPeerIsNotDialled: a processor whose
// advertisement gives a third party's addresses (to have every node of a
// small mesh dial it) gets no node to dial them, and its advertisement,
// which no node can reach, keeps topic discovery on.
func TestAdvertNamingAnotherPeerIsNotDialled(t *testing.T) {
	ctx := context.Background()
	first := startDialler(t, 32, nil)
	liar := startDialler(t, 32, fullAddrs(first.Host))
	pcfg := p2p.LoopbackConfig()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	victim, err := p2p.New(ctx, p2p.Params{Config: pcfg, Identity: key, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Close() })

	ads, err := liar.Processors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ads, func(a Advert) bool { return a.PeerID == liar.Host.ID().String() })
	if i < 0 {
		t.Fatal("the liar's advertisement is not in its store")
	}
	forged := ads[i]
	forged.Addrs = fullAddrs(victim)
	if err := crdt.PutJSON(ctx, liar.Store, records.AdvertKey(forged.PeerID), records.AdvertType, forged); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, func() error {
		ads, err := first.Processors(ctx)
		if err != nil {
			return err
		}
		for _, a := range ads {
			if a.PeerID == forged.PeerID && slices.Equal(a.Addrs, forged.Addrs) {
				return nil
			}
		}
		return fmt.Errorf("the forged advertisement has not reached the first node")
	})
	_ = first.Host.Network().ClosePeer(liar.Host.ID())
	r := first.dialAdvertised(ctx, map[peer.ID]*p2p.Backoff{})
	if first.Host.Connected(victim.ID()) || slices.Contains(r.reached, victim.ID()) {
		t.Fatal("the first node dialled the address another processor's advertisement gave for a third party")
	}
	if !first.Host.Connected(liar.Host.ID()) && r.unconnected == 0 {
		t.Fatalf("the liar is not connected, yet the round counts no unconnected processor: %+v", r)
	}
}

// TestGoneProcessorLetsDiscoveryPause: a processor that stops leaves its
// advertisement in the store. While the advertisement is live, the node
// that cannot reach it keeps topic discovery on (the processor may be
// reachable through the DHT); once it is older than [dispatch]
// advert_ttl, the node pauses discovery again.
func TestGoneProcessorLetsDiscoveryPause(t *testing.T) {
	ctx := context.Background()
	const ttl = 20 * time.Second
	first := startDialler(t, 32, nil)
	observer := startDiallerWith(t, 32, fullAddrs(first.Host), func(cfg *Config) { cfg.Dispatch.AdvertTTL = Duration(ttl) })
	gone := startDialler(t, 32, fullAddrs(first.Host))
	wait.Until(t, ttl/2, func() error {
		ads, err := observer.Processors(ctx)
		if err != nil {
			return err
		}
		if len(ads) != 3 {
			return fmt.Errorf("the observer knows %d advertised processors, want 3", len(ads))
		}
		return nil
	})
	goneID := gone.Host.ID()
	if err := gone.Close(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, ttl/4, func() error {
		if observer.Host.Connected(goneID) {
			return fmt.Errorf("the observer is still connected to the stopped processor")
		}
		return nil
	})
	if r := observer.dialAdvertised(ctx, map[peer.ID]*p2p.Backoff{}); r.unconnected != 1 || !r.all {
		t.Fatalf("with %s stopped but its advertisement live: %+v, want one unconnected", goneID, r)
	}
	wait.Until(t, ttl, func() error {
		if observer.Host.TopicDiscoveryPaused() {
			return fmt.Errorf("a processor with a live advertisement is unreachable, yet topic discovery stays paused")
		}
		return nil
	})
	wait.Until(t, 3*ttl, func() error {
		if !observer.Host.TopicDiscoveryPaused() {
			return fmt.Errorf("the stopped processor's advertisement keeps topic discovery on")
		}
		return nil
	})
}
