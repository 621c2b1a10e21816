package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/peer"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"

	"github.com/jobmesh/jobmesh/internal/wait"
)

// TestResourceLimitsLeaveTrimmingToTheConnManager: the resource manager
// admits twice ConnHigh connections, so a node above ConnHigh trims old
// connections instead of refusing every new peer.
func TestResourceLimitsLeaveTrimmingToTheConnManager(t *testing.T) {
	for _, cfg := range []Config{DefaultConfig(), LoopbackConfig()} {
		sys := resourceLimits(cfg).ToPartialLimitConfig().System
		if got, want := int(sys.ConnsInbound), 2*cfg.ConnHigh; got < want {
			t.Errorf("ConnHigh %d: system inbound connections %d, want at least %d", cfg.ConnHigh, got, want)
		}
		if got, want := int(sys.Conns), 2*cfg.ConnHigh; got < want {
			t.Errorf("ConnHigh %d: system connections %d, want at least %d", cfg.ConnHigh, got, want)
		}
		if sys.StreamsInbound < sys.ConnsInbound {
			t.Errorf("%d inbound streams for %d inbound connections", sys.StreamsInbound, sys.ConnsInbound)
		}
		scaled := rcmgr.DefaultLimits
		libp2p.SetDefaultServiceLimits(&scaled)
		if got, want := sys.Memory, scaled.Scale(cfg.MaxMemory, cfg.MaxFileDescriptors).ToPartialLimitConfig().System.Memory; got != want {
			t.Errorf("system memory %d, want libp2p's %d for MaxMemory %d", got, want, cfg.MaxMemory)
		}
	}
}

// errorLog keeps the errors logged under "err".
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *errorLog) WithGroup(string) slog.Handler            { return l }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "err" {
			l.mu.Lock()
			l.errs = append(l.errs, err)
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

// TestBootstrapRedialsPastTheSwarmBackoff: a bootstrap peer that was down
// is redialled at the host's own pace; the swarm's dial backoff, which
// starts at 5 s and grows with every failure, refuses none of those dials.
func TestBootstrapRedialsPastTheSwarmBackoff(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	bootKey, err := GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	bootID, err := peer.IDFromPrivateKey(bootKey)
	if err != nil {
		t.Fatal(err)
	}
	logged := &errorLog{}
	cfg := LoopbackConfig()
	cfg.TopicDiscovery = false
	cfg.Bootstrap = []string{fmt.Sprintf("/ip4/127.0.0.1/tcp/%d/p2p/%s", port, bootID)}
	cfg.BootstrapInterval = 20 * time.Millisecond
	cfg.BootstrapMaxBackoff = 100 * time.Millisecond
	key, err := GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(context.Background(), Params{Config: cfg, Identity: key, Logger: slog.New(logged)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })

	// Three failed dials while the bootstrap peer is down.
	wait.Until(t, 10*time.Second, func() error {
		if n := len(logged.all()); n < 3 {
			return fmt.Errorf("%d failed dials", n)
		}
		return nil
	})
	bootCfg := LoopbackConfig()
	bootCfg.TopicDiscovery = false
	bootCfg.ListenAddrs = []string{fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", port)}
	boot, err := New(context.Background(), Params{Config: bootCfg, Identity: bootKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { boot.Close() })
	wait.Until(t, 10*time.Second, func() error {
		if !slices.Contains(h.Peers(), bootID) {
			return errors.New("not connected to the bootstrap peer")
		}
		return nil
	})
	for _, err := range logged.all() {
		if errors.Is(err, swarm.ErrDialBackoff) {
			t.Fatalf("a bootstrap dial was refused by the swarm's backoff: %v", err)
		}
	}
}
