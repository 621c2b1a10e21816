package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

func TestStorageConfig(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.Fetch.AllowPrivateAddresses || cfg.ProcessorConfig().Fetch.AllowPrivateAddresses {
		t.Fatal("private addresses allowed by default")
	}
	if got := cfg.ipfsConfig(); got.MaxStorageBytes != 10<<30 || got.GCInterval != time.Hour || got.GCGrace != 15*time.Minute {
		t.Fatalf("[ipfs] defaults %+v", got)
	}
	cfg.Fetch.AllowPrivateAddresses = true
	cfg.IPFS.MaxStorageBytes = 123 << 20
	if !cfg.ProcessorConfig().Fetch.AllowPrivateAddresses {
		t.Fatal("[fetch] allow_private_addresses does not reach the fetchers")
	}
	b, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := LoadConfig(path)
	if err != nil || !back.Fetch.AllowPrivateAddresses || back.IPFS != cfg.IPFS {
		t.Fatalf("round trip: %+v %+v, %v", back.Fetch, back.IPFS, err)
	}
	for _, bad := range []string{`gc_grace = "0s"`, `max_storage_bytes = -1`, `staging_dir = "relative"`} {
		key := strings.SplitN(bad, " ", 2)[0]
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, key+" = ") {
				lines[i] = bad
			}
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestReleaseFinished: a job's pins are released once the job is over
// (here: a JobAborted record on a mesh without a chain, or a job the store
// does not know), not before and not on a verdict that does not count, and the node drops its holder record of an output it
// does not keep for good.
func TestReleaseFinished(t *testing.T) {
	ctx := context.Background()
	id, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	pc := p2p.LoopbackConfig()
	n, err := New(ctx, Params{Role: RoleClient, Config: DefaultConfig(), Identity: id,
		Datastore: dssync.MutexWrap(ds.NewMapDatastore()), P2P: &pc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	code := []byte("\x00asm\x01\x00\x00\x00")
	info, err := n.DApp.Submit(ctx, dapp.Spec{Code: code, Data: bytes.Repeat([]byte("d"), 256),
		Slicing: jobs.Slicing{BlockSize: 64, MicroJobs: 2, BlocksPerMicro: 1}, Price: big.NewInt(1),
		Deadline: time.Now().Add(time.Hour), Creator: "0x00000000000000000000000000000000000000c1"})
	if err != nil {
		t.Fatal(err)
	}
	job := info.ID()
	content, err := n.IPFS.AddFile(ctx, bytes.NewReader([]byte("a result")))
	if err != nil {
		t.Fatal(err)
	}
	unknown := jobs.ID{9}
	for _, j := range []jobs.ID{job, unknown} {
		if err := n.IPFS.Pin(ctx, content, records.JobPinOwner(j)); err != nil {
			t.Fatal(err)
		}
		if err := records.WriteHolder(ctx, n.Store, n.Store.Self(), j, content); err != nil {
			t.Fatal(err)
		}
	}
	expiry := func(owner string) time.Time {
		pins, err := n.IPFS.Pins(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pins {
			if p.Owner == owner {
				return p.Expires
			}
		}
		t.Fatalf("no pin of %s", owner)
		return time.Time{}
	}
	hasHolder := func(j jobs.ID) bool {
		_, err := n.Store.Get(ctx, records.HolderKey(j, n.Store.Self()))
		return err == nil
	}

	// The inputs were pinned for the job at submission.
	if ok, _ := n.IPFS.IsPinned(ctx, cidOf(t, info.Data.URI)); !ok {
		t.Fatal("the job's uploaded data is not pinned for it")
	}
	if err := n.releaseFinished(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !expiry(records.JobPinOwner(job)).IsZero() || !hasHolder(job) {
		t.Fatal("a running job's pins were released")
	}
	if expiry(records.JobPinOwner(unknown)).IsZero() || hasHolder(unknown) {
		t.Fatal("the pins of a job the store does not know were kept")
	}

	// A verdict by a peer that did no work on the job does not count: it
	// does not end the job, so the pins stay.
	if err := n.Store.Put(ctx, records.VerdictKey(job, n.Store.Self().String()), records.VerdictType, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := n.releaseFinished(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !expiry(records.JobPinOwner(job)).IsZero() || !hasHolder(job) {
		t.Fatal("a verdict that does not count released the job's pins")
	}
	if err := n.Store.Put(ctx, records.AbortedKey(job), records.AbortedType, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := n.releaseFinished(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e := expiry(records.JobPinOwner(job)); e.IsZero() || time.Until(e) < 23*time.Hour {
		t.Fatalf("after the abort the job's pins expire at %v, want about %v from now", e, n.Config.IPFS.PinRetention)
	}
	if hasHolder(job) {
		t.Fatal("holder record kept for an output the node does not keep")
	}
	if _, err := n.Store.Get(ctx, records.HolderKey(job, n.Store.Self())); !errors.Is(err, crdt.ErrNotFound) {
		t.Fatalf("holder record: %v", err)
	}
}

func cidOf(t *testing.T, uri string) cid.Cid {
	t.Helper()
	c, err := cid.Decode(strings.TrimPrefix(uri, "ipfs://"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
