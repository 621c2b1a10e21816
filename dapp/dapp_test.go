package dapp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

func wordcount(t *testing.T) []byte {
	t.Helper()
	code, err := examples.Build(context.Background(), "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// spec is a job of the submitting node's wallet, which reveals its check
// seed.
func spec(code []byte, vram uint64) dapp.Spec {
	return dapp.Spec{
		Code: code, Data: []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 10)),
		Slicing:      jobs.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 1},
		Price:        big.NewInt(1000),
		Deadline:     time.Now().Add(time.Hour),
		Requirements: jobs.Requirements{MinVRAMMiB: vram},
	}
}

func member(m *localmesh.Mesh, role node.Role) *localmesh.Member {
	for _, mem := range m.Running() {
		if mem.Role == role {
			return mem
		}
	}
	return nil
}

// TestSubmittedJobsSurviveARestart: a client that restarts still knows the
// jobs it submitted, still announces the unfinished one and still serves
// its inputs.
func TestSubmittedJobsSurviveARestart(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1, Clients: 1})
	ctx := context.Background()
	c := member(m, node.RoleClient)
	// No processor has 1 TiB of VRAM: the job stays open.
	s := spec(wordcount(t), 1<<20)
	info, err := c.DApp.Submit(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	if !c.DApp.Submitted(id) || !c.DApp.Open(id) {
		t.Fatal("a submitted job is not remembered as open")
	}
	idx := c.Index
	if err := m.Stop(idx); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(ctx, idx); err != nil {
		t.Fatal(err)
	}
	c = m.Members[idx]
	if !c.DApp.Submitted(id) || !c.DApp.Open(id) {
		t.Fatal("after a restart the client forgot its open job")
	}
	// Its inputs are still served: the bootstrap node (which never had
	// them) fetches the data from the restarted client.
	dataCID, err := cid.Decode(strings.TrimPrefix(info.Data.URI, "ipfs://"))
	if err != nil {
		t.Fatal(err)
	}
	boot := m.Bootstrap()
	wait.Until(t, 30*time.Second, func() error {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rc, err := boot.IPFS.Cat(fctx, dataCID)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, s.Data) {
			return fmt.Errorf("fetched %d bytes, want the job's %d", len(b), len(s.Data))
		}
		return nil
	})
}

// TestProcessorSubmits: a processor node has a DApp client too, and a job
// it submits runs to its verdict; once the verdict is in, the job is no
// longer announced.
func TestProcessorSubmits(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 2, Timers: localmesh.Timers{Poll: 200 * time.Millisecond, DiscloseGrace: 2 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := member(m, node.RoleProcessor)
	if p.DApp == nil {
		t.Fatal("a processor node has no DApp client")
	}
	info, err := p.DApp.Submit(ctx, spec(wordcount(t), 0))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verdict.Verified || p.DApp.Open(info.ID()) || !p.DApp.Submitted(info.ID()) {
		t.Fatalf("verified %v, open %v", res.Verdict.Verified, p.DApp.Open(info.ID()))
	}
	// Work has started, so it cannot be cancelled; nor can a job this
	// node did not submit.
	if err := p.DApp.Cancel(ctx, info.ID()); !errors.Is(err, dapp.ErrStarted) {
		t.Fatalf("cancelling a finished job: %v", err)
	}
	if err := p.DApp.Cancel(ctx, jobs.ID{9}); !errors.Is(err, dapp.ErrNotMine) {
		t.Fatalf("cancelling another node's job: %v", err)
	}
}
