package node

import (
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"
	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/p2p"
)

// switchProxy forwards TCP connections on a fixed address to upstream
// while it is up; down closes the listener and every connection, as a
// chain endpoint that went away.
type switchProxy struct {
	addr, upstream string
	mu             sync.Mutex
	l              net.Listener
	conns          []net.Conn
}

func (p *switchProxy) up(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

func (p *switchProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestNodeOutlivesChainOutage: a processor whose chain endpoint goes away
// keeps running; its escrow calls fail with ErrUnreachable after their
// retries, and work again once the endpoint is back, with no restart.
func TestNodeOutlivesChainOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the retry backoff")
	}
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
	upstream := chain.URL()[len("http://"):]
	proxy := &switchProxy{addr: "127.0.0.1:0", upstream: upstream}
	proxy.up(t)
	defer proxy.down()

	dir := initRepo(t)
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rc, err := rpc.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	wallet := common.HexToAddress(r.Config.Processor.Wallet)
	if _, err := escrow.DevFund(ctx, rc, wallet, big.NewInt(3e18)); err != nil {
		t.Fatal(err)
	}
	cfg := r.Config
	cfg.Chain.RPC = "http://" + proxy.addr // the escrow is learned from the dev chain
	dstore, err := pebbleds.NewDatastore(filepath.Join(dir, DatastoreDir))
	if err != nil {
		t.Fatal(err)
	}
	defer dstore.Close()
	pcfg := p2p.LoopbackConfig()
	n, err := New(ctx, Params{Role: RoleProcessor, Config: cfg, Identity: r.Identity, Datastore: dstore, P2P: &pcfg, WalletKey: r.WalletKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.Escrow == nil || n.Escrow.Address() != chain.Escrow() {
		t.Fatalf("the node's escrow is %v, the dev chain's %s", n.Escrow, chain.Escrow())
	}
	if _, err := n.Escrow.Stake(ctx, params.MinStake); err != nil {
		t.Fatal(err)
	}

	proxy.down()
	if _, err := n.Escrow.StakeOf(ctx, wallet); !errors.Is(err, escrow.ErrUnreachable) {
		t.Fatalf("escrow call with the chain away: %v", err)
	}
	if len(n.Host.Addrs()) == 0 {
		t.Fatal("the node's host stopped")
	}

	proxy.up(t)
	wait.Until(t, 30*time.Second, func() error {
		st, err := n.Escrow.StakeOf(ctx, wallet)
		if err != nil {
			return err
		}
		if st.Active.Cmp(params.MinStake) != 0 {
			return errors.New("stake lost")
		}
		return nil
	})
	// Transactions go through again too.
	if _, err := n.Escrow.RequestUnstake(ctx, big.NewInt(1)); err != nil {
		t.Fatalf("a transaction after the outage: %v", err)
	}
}
