package crdt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/libp2p/go-libp2p/core/crypto"
)

func TestConfigValidate(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	good := c.Config(0)
	if err := good.Validate(); err != nil {
		t.Fatalf("harness config invalid: %v", err)
	}
	rsa, _, err := crypto.GenerateSecp256k1Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*crdt.Config){
		"no datastore":      func(c *crdt.Config) { c.Datastore = nil },
		"no dag":            func(c *crdt.Config) { c.DAGService = nil },
		"no pubsub":         func(c *crdt.Config) { c.PubSub = nil },
		"no key":            func(c *crdt.Config) { c.PrivKey = nil },
		"not ed25519":       func(c *crdt.Config) { c.PrivKey = rsa },
		"relative ns":       func(c *crdt.Config) { c.Namespace = "jobmesh" },
		"no topic":          func(c *crdt.Config) { c.Topic = "" },
		"zero payload":      func(c *crdt.Config) { c.MaxPayload = 0 },
		"huge payload":      func(c *crdt.Config) { c.MaxPayload = 2 << 20 },
		"tiny buffer":       func(c *crdt.Config) { c.WatchBuffer = 1 },
		"no rebroadcast":    func(c *crdt.Config) { c.RebroadcastInterval = 0 },
		"no logger":         func(c *crdt.Config) { c.Logger = nil },
		"no workers":        func(c *crdt.Config) { c.NumWorkers = 0 },
		"no reject memory":  func(c *crdt.Config) { c.RejectLogMemory = 0 },
		"no verified cache": func(c *crdt.Config) { c.VerifiedCache = 0 },
	} {
		cfg := good
		cfg.Datastore = dssync.MutexWrap(datastore.NewMapDatastore())
		mod(&cfg)
		if err := cfg.Validate(); !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if _, err := crdt.New(context.Background(), cfg); !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Errorf("%s: New = %v", name, err)
		}
	}
}
