package node

import (
	"bytes"
	"context"
	"log/slog"
	"math/big"
	"slices"
	"testing"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// TestJobStoreEndsOnlyWhenOver: a node ends a job's store (and drops it
// a retention later) only once the job is over. A verdict that does not
// count (a forger's) ends nothing; a job the node joined before its
// JobInfo reached the mesh store is not over until a retention has passed
// since it joined; a JobAborted claim on a mesh without a chain ends the
// job, as it does its pins.
func TestJobStoreEndsOnlyWhenOver(t *testing.T) {
	ctx := context.Background()
	id, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	pc := p2p.LoopbackConfig()
	cfg := DefaultConfig()
	cfg.Store.JobStores = JobStoresOn
	cfg.Store.JobRetention = Duration(time.Minute)
	n, err := New(ctx, Params{Role: RoleClient, Config: cfg, Identity: id,
		Datastore: dssync.MutexWrap(ds.NewMapDatastore()), P2P: &pc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	info, err := n.DApp.Submit(ctx, dapp.Spec{Code: []byte("\x00asm\x01\x00\x00\x00"), Data: bytes.Repeat([]byte("d"), 256),
		Slicing: jobs.Slicing{BlockSize: 64, MicroJobs: 2, BlocksPerMicro: 1}, Price: big.NewInt(1),
		Deadline: time.Now().Add(time.Hour), Creator: "0x00000000000000000000000000000000000000c1"})
	if err != nil {
		t.Fatal(err)
	}
	job, early := info.ID(), jobs.ID{7}
	if err := n.router.Join(ctx, early); err != nil {
		t.Fatal(err)
	}
	if held := n.JobStores().Held(); !slices.Contains(held, job) || !slices.Contains(held, early) {
		t.Fatalf("held %v, want the submitted job and the one joined early", held)
	}
	ended := func(id jobs.ID) bool {
		_, at, ok := n.JobStores().Times(id)
		if !ok {
			t.Fatalf("job %s's store is not held", id)
		}
		return !at.IsZero()
	}

	// A verdict by a peer that did no work does not count.
	if err := n.Store.Put(ctx, records.VerdictKey(job, n.Store.Self().String()), records.VerdictType, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	n.endJobStores(ctx, now)
	if ended(job) || ended(early) {
		t.Fatal("a forged verdict or a JobInfo not yet in the store ended a job's store")
	}

	// A retention after it joined, a job the store never learned is over.
	n.endJobStores(ctx, now.Add(time.Minute+time.Second))
	if ended(job) || !ended(early) {
		t.Fatalf("a retention after joining: submitted job ended %v, early one ended %v", ended(job), ended(early))
	}

	// On a mesh without a chain, a JobAborted claim ends the job.
	if err := n.Store.Put(ctx, records.AbortedKey(job), records.AbortedType, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	n.endJobStores(ctx, now)
	if !ended(job) {
		t.Fatal("an aborted job's store did not end")
	}
}
