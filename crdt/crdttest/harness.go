package crdttest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/blockstore"
	offline "github.com/ipfs/boxo/exchange/offline"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	pebbleds "github.com/ipfs/go-ds-pebble"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jobmesh/jobmesh/crdt"
)

// Options shape a Cluster.
type Options struct {
	// Replicas is the number of replicas. Default 3.
	Replicas int
	// Pebble puts each replica's datastore in go-ds-pebble under a temp
	// dir (closed and reopened by Stop/Start) instead of a MapDatastore.
	// Default false.
	Pebble bool
	// Configure, if set, adjusts replica i's Config before every open.
	Configure func(i int, cfg *crdt.Config)
	// Logger receives every replica's logs. Default: discarded.
	Logger *slog.Logger
	// PubSub are extra options for every replica's gossipsub.
	PubSub []pubsub.Option
}

// Replica is one member of a Cluster.
type Replica struct {
	Index     int
	Key       crypto.PrivKey
	Host      host.Host
	PubSub    *pubsub.PubSub
	DAG       ipld.DAGService
	Datastore datastore.Batching
	// Registry holds the store's metrics; it survives Stop/Start.
	Registry *prometheus.Registry
	// Store is nil while the replica is stopped.
	Store *crdt.Store

	dir string
}

// ID is the replica's peer ID.
func (r *Replica) ID() peer.ID { return r.Host.ID() }

// Cluster is a set of connected replicas sharing one topic.
type Cluster struct {
	t        testing.TB
	opts     Options
	ctx      context.Context
	Blocks   blockstore.Blockstore
	Replicas []*Replica
}

// New starts a cluster, waits until every replica sees every other one on
// the CRDT topic, and registers its teardown with t.Cleanup.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Replicas == 0 {
		opts.Replicas = 3
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// Made before the teardown is registered, so that it is removed after
	// the datastores in it are closed.
	var base string
	if opts.Pebble {
		base = t.TempDir()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cluster{
		t:      t,
		opts:   opts,
		ctx:    ctx,
		Blocks: blockstore.NewBlockstore(dssync.MutexWrap(datastore.NewMapDatastore())),
	}
	t.Cleanup(func() {
		for _, r := range c.Replicas {
			if r.Store != nil {
				if err := r.Store.Close(); err != nil {
					t.Errorf("closing replica %d: %v", r.Index, err)
				}
			}
			if r.Datastore != nil {
				if err := r.Datastore.Close(); err != nil {
					t.Errorf("closing datastore %d: %v", r.Index, err)
				}
			}
		}
		cancel()
		for _, r := range c.Replicas {
			_ = r.Host.Close()
		}
	})
	// Offline exchange over the one shared blockstore: every replica reads
	// every block locally. Bitswap is exercised by the node tests.
	bserv := blockservice.New(c.Blocks, offline.Exchange(c.Blocks))
	for i := range opts.Replicas {
		priv, _, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := libp2p.New(libp2p.Identity(priv), libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
		if err != nil {
			t.Fatal(err)
		}
		ps, err := pubsub.NewGossipSub(ctx, h, opts.PubSub...)
		if err != nil {
			t.Fatal(err)
		}
		r := &Replica{
			Index:    i,
			Key:      priv,
			Host:     h,
			PubSub:   ps,
			DAG:      merkledag.NewDAGService(bserv),
			Registry: prometheus.NewRegistry(),
		}
		if opts.Pebble {
			r.dir = filepath.Join(base, fmt.Sprintf("replica-%d", i))
		}
		r.Datastore = c.openDatastore(r)
		c.Replicas = append(c.Replicas, r)
	}
	for i, a := range c.Replicas {
		for _, b := range c.Replicas[i+1:] {
			if err := a.Host.Connect(ctx, peer.AddrInfo{ID: b.Host.ID(), Addrs: b.Host.Addrs()}); err != nil {
				t.Fatalf("connecting %d to %d: %v", a.Index, b.Index, err)
			}
		}
	}
	for i := range c.Replicas {
		c.Start(i)
	}
	c.WaitTopicMesh()
	return c
}

func (c *Cluster) openDatastore(r *Replica) datastore.Batching {
	if !c.opts.Pebble {
		return dssync.MutexWrap(datastore.NewMapDatastore())
	}
	d, err := pebbleds.NewDatastore(r.dir)
	if err != nil {
		c.t.Fatal(err)
	}
	return d
}

// Config returns the Config replica i is opened with: defaults, a short
// RebroadcastInterval so that catch-up happens within a test, then
// Options.Configure.
func (c *Cluster) Config(i int) crdt.Config {
	r := c.Replicas[i]
	cfg := crdt.DefaultConfig()
	cfg.Datastore = r.Datastore
	cfg.DAGService = r.DAG
	cfg.PubSub = r.PubSub
	cfg.PrivKey = r.Key
	cfg.Registerer = r.Registry
	cfg.Logger = c.opts.Logger.With("replica", i)
	cfg.RebroadcastInterval = 200 * time.Millisecond
	if c.opts.Configure != nil {
		c.opts.Configure(i, &cfg)
	}
	return cfg
}

// Start opens replica i's store (and, with Pebble, its datastore).
func (c *Cluster) Start(i int) {
	c.t.Helper()
	r := c.Replicas[i]
	if r.Store != nil {
		c.t.Fatalf("replica %d already started", i)
	}
	if r.Datastore == nil {
		r.Datastore = c.openDatastore(r)
	}
	s, err := crdt.New(c.ctx, c.Config(i))
	if err != nil {
		c.t.Fatalf("opening replica %d: %v", i, err)
	}
	r.Store = s
}

// Stop closes replica i's store; with Pebble it also closes the datastore,
// so that Start really reopens it from disk. The host stays up.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	r := c.Replicas[i]
	if err := r.Store.Close(); err != nil {
		c.t.Fatalf("closing replica %d: %v", i, err)
	}
	r.Store = nil
	if c.opts.Pebble {
		if err := r.Datastore.Close(); err != nil {
			c.t.Fatalf("closing datastore %d: %v", i, err)
		}
		r.Datastore = nil
	}
}

// WaitTopicMesh waits until every running replica sees every other running
// replica subscribed to its topic, so that announcements reach everyone.
func (c *Cluster) WaitTopicMesh() {
	c.t.Helper()
	running := 0
	for _, r := range c.Replicas {
		if r.Store != nil {
			running++
		}
	}
	WaitUntil(c.t, 20*time.Second, func() error {
		for _, r := range c.Replicas {
			if r.Store == nil {
				continue
			}
			if n := len(r.PubSub.ListPeers(c.Config(r.Index).Topic)); n < running-1 {
				return fmt.Errorf("replica %d sees %d of %d peers on the topic", r.Index, n, running-1)
			}
		}
		return nil
	})
}

// WaitGet waits until replica i returns a verified record under key that
// satisfies ok (any record when ok is nil) and returns it.
func (c *Cluster) WaitGet(i int, key string, ok func(crdt.Record) bool) crdt.Record {
	c.t.Helper()
	var got crdt.Record
	WaitUntil(c.t, 20*time.Second, func() error {
		r, err := c.Replicas[i].Store.Get(context.Background(), key)
		if err != nil {
			return fmt.Errorf("replica %d: %w", i, err)
		}
		if ok != nil && !ok(r) {
			return fmt.Errorf("replica %d: record %q not yet as expected", i, key)
		}
		got = r
		return nil
	})
	return got
}

// WaitUntil polls cond until it returns nil, failing t with cond's last error
// once timeout has passed. It is the only way tests here wait.
func WaitUntil(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("condition not met after %v: %v", timeout, err)
		case <-tick.C:
		}
	}
}

// Metric returns the value of the counter or gauge name with exactly the
// given labels in reg, or 0 if it has not been exported.
func Metric(t testing.TB, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsMatch(m, labels) {
				if g := m.GetGauge(); g != nil {
					return g.GetValue()
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func labelsMatch(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		v, ok := want[l.GetName()]
		if !ok || v != l.GetValue() {
			return false
		}
		n++
	}
	return n == len(want)
}
