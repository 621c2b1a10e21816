// Package localmesh runs a whole jobmesh mesh inside one process: a
// bootstrap node and processors, each with its own repo on disk, on
// 127.0.0.1 sockets or on a libp2p mock network. The demo runs on it, and
// so do the tests that need a mesh (meshtest wraps it for them).
package localmesh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	pebbleds "github.com/ipfs/go-ds-pebble"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

// Options configure a mesh.
type Options struct {
	// Processors is the number of processor nodes. Default: 3.
	Processors int
	// Clients is the number of client (DApp) nodes. Default: 0.
	Clients int
	// Dir holds one repo per member. Required.
	Dir string
	// Mocknet, when set, puts every host on this mock network (linked to
	// every other) instead of real sockets, so that tests can cut links.
	Mocknet mocknet.Mocknet
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Configure, when set, adjusts each member's config before its repo is
	// created.
	Configure func(m *Member, cfg *node.Config)
	// Processor, when set, adjusts each processor's settings at every start
	// (tests shorten timeouts and inject faults through it).
	Processor func(m *Member, pc *processor.Config)
}

// Member is one node of the mesh. Node is nil while the member is stopped.
type Member struct {
	Index int
	Role  node.Role
	Dir   string
	*node.Node

	repo *node.Repo
	ds   *pebbleds.Datastore
}

// Mesh is a running in-process mesh. Members[0] is the bootstrap node.
type Mesh struct {
	opts      Options
	mu        sync.Mutex
	Members   []*Member
	bootstrap []string
}

// Start creates the repos and starts every member.
func Start(ctx context.Context, opts Options) (_ *Mesh, err error) {
	if opts.Dir == "" {
		return nil, errors.New("localmesh: Dir is required")
	}
	if opts.Processors == 0 {
		opts.Processors = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Mesh{opts: opts}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	roles := []node.Role{node.RoleBootstrap}
	for range opts.Processors {
		roles = append(roles, node.RoleProcessor)
	}
	for range opts.Clients {
		roles = append(roles, node.RoleClient)
	}
	for i, role := range roles {
		mem := &Member{Index: i, Role: role, Dir: filepath.Join(opts.Dir, fmt.Sprintf("%s-%d", role, i))}
		cfg := node.DefaultConfig()
		cfg.Store.Rebroadcast = node.Duration(time.Second)
		cfg.Store.DAGSyncTimeout = node.Duration(3 * time.Second) // loopback
		cfg.Processor.AdvertiseEvery = node.Duration(time.Minute)
		if opts.Configure != nil {
			opts.Configure(mem, &cfg)
		}
		if err := node.InitRepo(mem.Dir, cfg); err != nil {
			return nil, err
		}
		m.Members = append(m.Members, mem)
		if err := m.start(ctx, mem); err != nil {
			return nil, err
		}
		if i == 0 {
			for _, a := range mem.Host.FullAddrs() {
				m.bootstrap = append(m.bootstrap, a.String())
			}
		}
	}
	return m, nil
}

func (m *Mesh) start(ctx context.Context, mem *Member) (err error) {
	repo, err := node.OpenRepo(mem.Dir)
	if err != nil {
		return err
	}
	dstore, err := repo.OpenDatastore()
	if err != nil {
		repo.Close()
		return err
	}
	defer func() {
		if err != nil {
			dstore.Close()
			repo.Close()
		}
	}()
	pcfg := p2p.LoopbackConfig()
	pcfg.Bootstrap = m.bootstrap
	params := node.Params{
		Role:      mem.Role,
		Config:    repo.Config,
		Identity:  repo.Identity,
		Datastore: dstore,
		P2P:       &pcfg,
		Logger:    m.opts.Logger.With("node", mem.Index),
	}
	if mem.Role == node.RoleProcessor && m.opts.Processor != nil {
		pc := repo.Config.ProcessorConfig()
		m.opts.Processor(mem, &pc)
		params.Processor = &pc
	}
	if mn := m.opts.Mocknet; mn != nil {
		addr := ma.StringCast(fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", 10000+mem.Index))
		h, err := mn.AddPeer(repo.Identity, addr)
		if err != nil {
			return fmt.Errorf("localmesh: mock host: %w", err)
		}
		if err := mn.LinkAll(); err != nil {
			return fmt.Errorf("localmesh: link: %w", err)
		}
		params.Host = h
		bs, _ := p2p.ParseAddrInfos(m.bootstrap)
		for _, b := range bs {
			h.Peerstore().AddAddrs(b.ID, b.Addrs, time.Hour)
		}
	}
	n, err := node.New(ctx, params)
	if err != nil {
		return err
	}
	mem.Node, mem.repo, mem.ds = n, repo, dstore
	return nil
}

// Bootstrap returns the bootstrap member.
func (m *Mesh) Bootstrap() *Member { return m.Members[0] }

// BootstrapAddrs are the bootstrap node's full multiaddrs.
func (m *Mesh) BootstrapAddrs() []string { return m.bootstrap }

// Running returns the members that are running.
func (m *Mesh) Running() []*Member {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Member
	for _, mem := range m.Members {
		if mem.Node != nil {
			out = append(out, mem)
		}
	}
	return out
}

// Stop stops member i and releases its repo; its files stay.
func (m *Mesh) Stop(i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Members[i].stop()
}

func (mem *Member) stop() error {
	if mem.Node == nil {
		return nil
	}
	err := errors.Join(mem.Node.Close(), mem.ds.Close(), mem.repo.Close())
	mem.Node, mem.ds, mem.repo = nil, nil, nil
	return err
}

// Restart starts a stopped member again from its repo: same identity, same
// datastore.
func (m *Mesh) Restart(ctx context.Context, i int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem := m.Members[i]
	if mem.Node != nil {
		return fmt.Errorf("localmesh: member %d is running", i)
	}
	return m.start(ctx, mem)
}

// Close stops every member.
func (m *Mesh) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for i := len(m.Members) - 1; i >= 0; i-- {
		errs = append(errs, m.Members[i].stop())
	}
	return errors.Join(errs...)
}
