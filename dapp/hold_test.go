package dapp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// candidates returns the client's jobmesh_dapp_output_candidates_total
// for outcome.
func candidates(t *testing.T, reg prometheus.Gatherer, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "jobmesh_dapp_output_candidates_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestForgedHolderIsNotFetched: while a job is open, a peer with no
// disclosure in it (the bootstrap node) says it holds the job's output
// and names content only it has. The creator's node refuses it (counted)
// and never fetches that content; it does fetch and hold the output the
// job's finalizer hands it before the verdict, which names that output.
// The holders listed once the verdict is in leave the forger out.
func TestForgedHolderIsNotFetched(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 2, Clients: 1, Timers: localmesh.Timers{
		Poll: 200 * time.Millisecond, DiscloseGrace: 2 * time.Second,
		HoldWait: 3 * time.Minute, // a verdict within it follows a handoff
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := member(m, node.RoleClient)
	attacker := m.Bootstrap()
	bait := make([]byte, 64<<10)
	if _, err := rand.Read(bait); err != nil {
		t.Fatal(err)
	}
	forged, err := attacker.IPFS.AddFile(ctx, bytes.NewReader(bait))
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.DApp.Submit(ctx, spec(wordcount(t), 0))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	if err := records.WriteHolder(ctx, attacker.Store, attacker.Host.ID(), id, forged); err != nil {
		t.Fatal(err)
	}
	// The forged record reaches the creator's store before any finalizer
	// holds the output, and the creator's node acts on holder records in
	// the order they arrive: by the time the verdict follows its handoff,
	// the forged one was dealt with.
	wait.Until(t, time.Minute, func() error {
		_, err := c.Store.Get(ctx, records.HolderKey(id, attacker.Host.ID()))
		return err
	})
	if hs, err := records.HoldersOf(ctx, c.Store, id, cid.Undef); err != nil || len(hs) != 1 {
		t.Fatalf("holders when the forged record arrived: %v (%v), want the attacker alone", hs, err)
	}
	res, err := c.DApp.WaitVerdict(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if has, err := c.IPFS.Has(ctx, forged); err != nil || has {
		t.Fatalf("the creator's node fetched the forged candidate %s (%v)", forged, err)
	}
	if n := candidates(t, c.Metrics, "held"); n < 1 {
		t.Fatalf("the creator's node held no candidate before the verdict (%v)", n)
	}
	r, err := c.Store.Get(ctx, records.HolderKey(id, c.Host.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if _, out, ok := records.ReadHolder(id, r); !ok || !out.Equals(res.Output) {
		t.Fatalf("the creator's holder record names %s, the verdict %s", out, res.Output)
	}
	pins, err := c.IPFS.Pins(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pins {
		if p.CID.Equals(forged) {
			t.Fatalf("the forged candidate is pinned by %s", p.Owner)
		}
	}
	// The forger's record stays, but it names no output of the verdict:
	// the holders listed (the store's and the API's) leave it out.
	holders, err := records.HoldersOf(ctx, c.Store, id, res.Output)
	if err != nil || !slices.Contains(holders, c.Host.ID()) || slices.Contains(holders, attacker.Host.ID()) {
		t.Fatalf("holders %v (%v): want the creator %s, not the forger %s", holders, err, c.Host.ID(), attacker.Host.ID())
	}
	srv := httptest.NewServer(api.NewHandler(c.Node.APIDeps(), c.Node.Config.API))
	defer srv.Close()
	j, err := meshclient.New(srv.URL).Job(ctx, id.String())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(j.Holders, attacker.Host.ID().String()) || !slices.Contains(j.Holders, c.Host.ID().String()) {
		t.Fatalf("GET /v1/jobs/{id} holders %v", j.Holders)
	}
	wait.Until(t, time.Minute, func() error {
		if n := candidates(t, c.Metrics, "not-discloser"); n < 1 {
			return fmt.Errorf("the forged holder record was not refused (%v)", n)
		}
		return nil
	})
}
