package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/p2p"
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
// dial: it dials none.
func TestDialAdvertisedOnlyInSmallMesh(t *testing.T) {
	ctx := context.Background()
	start := func(limit int, bootstrap []string) *Node {
		t.Helper()
		r, err := OpenRepo(initRepo(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		cfg := r.Config
		cfg.P2P.DialAllBelow = limit
		pcfg := p2p.LoopbackConfig()
		pcfg.Bootstrap = bootstrap
		n, err := New(ctx, Params{Role: RoleProcessor, Config: cfg, Identity: r.Identity, Datastore: dssync.MutexWrap(ds.NewMapDatastore()),
			P2P: &pcfg, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	first := start(32, nil)
	var addrs []string
	for _, a := range first.Host.FullAddrs() {
		addrs = append(addrs, a.String())
	}
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
		if got, all := small.dialAdvertised(ctx, map[peer.ID]*p2p.Backoff{}); !all || !slices.Contains(got, large.Host.ID()) {
			return fmt.Errorf("under the limit, dialled %v, not %s", got, large.Host.ID())
		}
		return nil
	})
	if !small.Host.Connected(large.Host.ID()) {
		t.Fatal("dialled but not connected")
	}

	_ = large.Host.Network().ClosePeer(small.Host.ID())
	_ = large.Host.Network().ClosePeer(first.Host.ID())
	if got, all := large.dialAdvertised(ctx, map[peer.ID]*p2p.Backoff{}); all || len(got) != 0 {
		t.Fatalf("above the limit, dialled %v", got)
	}
}
