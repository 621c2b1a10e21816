package crdt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

// withholdingDAG is a replica's DAG service that fails to fetch the
// blocks it is told to withhold, as a network that cannot reach their
// holders would.
type withholdingDAG struct {
	ipld.DAGService
	mu sync.Mutex
	// allow, when set, lets only these blocks through; withheld blocks
	// never come through.
	// Both are keyed by multihash: a block store lists raw CIDs.
	allow    map[string]bool
	withheld map[string]bool
	refused  int // withheld blocks asked for
}

var errWithheld = errors.New("block withheld")

func (d *withholdingDAG) passes(c cid.Cid) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.withheld[string(c.Hash())] {
		d.refused++
		return false
	}
	return d.allow == nil || d.allow[string(c.Hash())]
}

func (d *withholdingDAG) Get(ctx context.Context, c cid.Cid) (ipld.Node, error) {
	if !d.passes(c) {
		return nil, errWithheld
	}
	return d.DAGService.Get(ctx, c)
}

func (d *withholdingDAG) GetMany(ctx context.Context, cs []cid.Cid) <-chan *ipld.NodeOption {
	out := make(chan *ipld.NodeOption, len(cs))
	var pass []cid.Cid
	for _, c := range cs {
		if d.passes(c) {
			pass = append(pass, c)
		} else {
			out <- &ipld.NodeOption{Err: fmt.Errorf("%s: %w", c, errWithheld)}
		}
	}
	go func() {
		defer close(out)
		for o := range d.DAGService.GetMany(ctx, pass) {
			out <- o
		}
	}()
	return out
}

// blockSet returns the multihashes of the blocks in bs.
func blockSet(t *testing.T, bs blockstore.Blockstore) map[string]bool {
	t.Helper()
	ch, err := bs.AllKeysChan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for c := range ch {
		set[string(c.Hash())] = true
	}
	return set
}

// TestRepairSoonRecoversAMissedUpdate: a replica that could not fetch an
// older update while walking a newer one (it reads the newer record, not
// the older) gets the older record within seconds of RepairSoon once the
// block can be fetched, though its repair interval is an hour.
func TestRepairSoonRecoversAMissedUpdate(t *testing.T) {
	dag := &withholdingDAG{}
	c := crdttest.New(t, crdttest.Options{Replicas: 2, Configure: func(i int, cfg *crdt.Config) {
		cfg.RepairInterval = time.Hour
		// No periodic re-announcement: replica 1 would walk the newer
		// head again once headRepeat has passed and find the older
		// update without a repair.
		cfg.RebroadcastInterval = time.Hour
		cfg.DAGSyncTimeout = time.Second
		if i == 1 {
			dag.DAGService = cfg.DAGService
			cfg.DAGService = dag
		}
	}})
	ctx := context.Background()
	before := blockSet(t, c.Blocks)
	dag.mu.Lock()
	dag.allow = before // replica 1 fetches nothing new until told
	dag.mu.Unlock()
	if err := c.Replicas[0].Store.Put(ctx, "/jobs/a", "job", []byte("older")); err != nil {
		t.Fatal(err)
	}
	dag.mu.Lock()
	dag.withheld = map[string]bool{}
	for b := range blockSet(t, c.Blocks) {
		if !before[b] {
			dag.withheld[b] = true // the older update's delta
		}
	}
	dag.allow = nil
	dag.mu.Unlock()
	if err := c.Replicas[0].Store.Put(ctx, "/jobs/b", "job", []byte("newer")); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(1, "/jobs/b", nil)
	// Replica 1 may show the newer update before its walk reaches the
	// older delta: the delta must have been refused before it is let
	// through, or the walk would simply find it.
	crdttest.WaitUntil(t, waitFor, func() error {
		dag.mu.Lock()
		defer dag.mu.Unlock()
		if dag.refused == 0 {
			return errors.New("replica 1 has not asked for the withheld delta")
		}
		return nil
	})
	if _, err := c.Replicas[1].Store.Get(ctx, "/jobs/a"); !errors.Is(err, crdt.ErrNotFound) {
		t.Fatalf("replica 1 read the withheld update: %v", err)
	}
	dag.mu.Lock()
	dag.withheld = nil
	dag.mu.Unlock()
	// Asked until it comes: the DAG is marked dirty just after the refusal,
	// and a check that came first finds nothing to repair.
	crdttest.WaitUntil(t, waitFor, func() error {
		c.Replicas[1].Store.RepairSoon()
		rec, err := c.Replicas[1].Store.Get(ctx, "/jobs/a")
		if err != nil {
			return fmt.Errorf("replica 1: %w", err)
		}
		if string(rec.Payload) != "older" {
			t.Fatalf("replica 1 read %q", rec.Payload)
		}
		return nil
	})
	crdttest.WaitUntil(t, waitFor, func() error {
		if n := crdttest.Metric(t, c.Replicas[1].Registry, "jobmesh_crdt_repairs_total", nil); n != 1 {
			return fmt.Errorf("replica 1 ran %v repairs, want 1", n)
		}
		return nil
	})
}
