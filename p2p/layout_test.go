package p2p

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/internal/wait"
)

// TestOtherLayoutsAreRefused: a node closes the connection of a peer that
// identifies as a jobmesh node of another layout and counts it; a peer of
// its own layout and a peer that is no jobmesh node (an IPFS client) stay.
func TestOtherLayoutsAreRefused(t *testing.T) {
	h := newTestHost(t, nil)
	dial := func(agent string) peer.ID {
		t.Helper()
		c, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.UserAgent(agent))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Connect(context.Background(), peer.AddrInfo{ID: h.ID(), Addrs: h.Addrs()}); err != nil {
			t.Fatal(err)
		}
		return c.ID()
	}
	identified := func(p peer.ID, agent string) func() error {
		return func() error {
			v, err := h.Peerstore().Get(p, "AgentVersion")
			if err != nil || v != agent {
				return fmt.Errorf("%s not identified yet (%v)", p, err)
			}
			return nil
		}
	}

	same, ipfs := dial(AgentVersion), dial("kubo/0.38.0")
	wait.Until(t, 10*time.Second, identified(same, AgentVersion))
	wait.Until(t, 10*time.Second, identified(ipfs, "kubo/0.38.0"))
	old := dial("jobmesh/1")
	wait.Until(t, 10*time.Second, func() error {
		if h.Network().Connectedness(old) == network.Connected {
			return errors.New("the layout 1 peer is still connected")
		}
		return nil
	})
	if got := testutil.ToFloat64(h.metrics.refused.WithLabelValues("layout")); got != 1 {
		t.Fatalf("refused %v peers for their layout, want 1", got)
	}
	for _, p := range []peer.ID{same, ipfs} {
		if h.Network().Connectedness(p) != network.Connected {
			t.Fatalf("peer %s was disconnected", p)
		}
	}
}

func TestOtherLayout(t *testing.T) {
	for agent, want := range map[string]bool{
		AgentVersion: false, "jobmesh/1": true, "jobmesh/3": true, "jobmesh/": true,
		"kubo/0.38.0": false, "": false, "github.com/libp2p/go-libp2p": false,
	} {
		if got := OtherLayout(agent); got != want {
			t.Errorf("OtherLayout(%q) = %v, want %v", agent, got, want)
		}
	}
}
