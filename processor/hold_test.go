package processor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// memberOf returns the running member of m with peer ID p.
func memberOf(t *testing.T, m *localmesh.Mesh, p peer.ID) *localmesh.Member {
	t.Helper()
	for _, mem := range m.Running() {
		if mem.Host.ID() == p {
			return mem
		}
	}
	t.Fatalf("no running member is %s", p)
	return nil
}

// killAtVerdict watches watcher's store for job id's first verdict
// record and, the moment it appears, reads the holder records in its
// author's store, then stops the author. It returns the author, the
// output the author's holder record names, and every holder of that
// output in the author's store as it was when the verdict appeared.
func killAtVerdict(t *testing.T, ctx context.Context, m *localmesh.Mesh, watcher *localmesh.Member, id jobs.ID) (peer.ID, cid.Cid, []peer.ID) {
	t.Helper()
	changes := watcher.Store.Watch(ctx, records.VerdictPrefix(id))
	for c := range changes {
		if c.Kind != crdt.ChangePut {
			continue
		}
		fin := memberOf(t, m, c.Record.Author)
		r, err := fin.Store.Get(ctx, records.HolderKey(id, fin.Host.ID()))
		if err != nil {
			t.Fatalf("the finalizer wrote its verdict without its own holder record: %v", err)
		}
		_, out, ok := records.ReadHolder(id, r)
		if !ok {
			t.Fatal("the finalizer's holder record does not read")
		}
		holders, err := records.HoldersOf(ctx, fin.Store, id, out)
		if err != nil {
			t.Fatal(err)
		}
		author := fin.Host.ID()
		if err := m.Stop(fin.Index); err != nil {
			t.Fatal(err)
		}
		return author, out, holders
	}
	t.Fatalf("no verdict for job %s: %v", id, ctx.Err())
	return "", cid.Undef, nil
}

// specFor is job's spec with n MicroJobs of k blocks a MacroJob; without
// a chain it names a creator.
func specFor(m *localmesh.Mesh, job mandelbrotJob, n, k uint32) dapp.Spec {
	s := job.spec(n, k)
	if m.Chain == nil {
		s.Creator = "0x00000000000000000000000000000000000000c1"
	}
	return s
}

// holdTune gives the processors a HoldWait long enough that a verdict
// within it can only follow a handoff.
func holdTune(_ *localmesh.Member, pc *processor.Config) { pc.HoldWait = 3 * time.Minute }

// TestOutputOutlivesItsAssembler: the assembling processor is stopped the
// moment its verdict reaches the creator's node. Before it wrote the
// verdict a second node (the creator's, which is online) held the same
// output, so the DApp still gets the whole output by CID, byte for byte
// the local run's, from the nodes left; with and without a chain.
func TestOutputOutlivesItsAssembler(t *testing.T) {
	for _, chain := range []bool{false, true} {
		t.Run(fmt.Sprintf("chain=%v", chain), func(t *testing.T) {
			opts := localmesh.Options{Processors: 3}
			if chain {
				opts.Chain = &localmesh.ChainOptions{}
			}
			m := flowMeshWith(t, opts, func(mem *localmesh.Member, pc *processor.Config) {
				holdTune(mem, pc)
				pc.FundingBackoff = 200 * time.Millisecond
			})
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			job := newMandelbrot(t, 192, 160, 32)
			c := client(m)
			info, err := c.DApp.Submit(ctx, specFor(m, job, 3, 4))
			if err != nil {
				t.Fatal(err)
			}
			id := info.ID()
			fin, out, holders := killAtVerdict(t, ctx, m, c, id)
			if !slices.Contains(holders, c.Host.ID()) {
				t.Fatalf("when the verdict appeared, %s's output %s was held by %v, not by the creator's node %s", fin, out, holders, c.Host.ID())
			}
			res, err := c.DApp.WaitVerdict(ctx, id, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Output.Equals(out) {
				t.Fatalf("the verdict names %s, the finalizer held %s", res.Output, out)
			}
			checkOutput(t, m, job, res.Output, info.Output.Kind)
		})
	}
}

// TestRunnerUpHoldsWhenTheCreatorIsGone: the creator's node goes away once
// the job is published (the bootstrap node keeps its inputs). The
// designated finalizer then waits for the runner-up finalizer, which
// assembles and holds the output as soon as it sees the finalizer's
// holder record; only then is the verdict written. The finalizer is
// stopped the moment its verdict appears; the creator's node comes back
// and gets the whole output by CID from the runner-up.
func TestRunnerUpHoldsWhenTheCreatorIsGone(t *testing.T) {
	m := flowMesh(t, 3, holdTune)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 192, 160, 32)
	c := client(m)
	info, err := c.DApp.Submit(ctx, specFor(m, job, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	boot := leaveJob(t, ctx, m, c, info)
	fin, out, holders := killAtVerdict(t, ctx, m, boot, id)
	if len(holders) < 2 {
		t.Fatalf("when the verdict appeared, %s's output %s was held by %v only", fin, out, holders)
	}
	for _, h := range holders {
		if h != fin && memberOf(t, m, h).Worker == nil {
			t.Fatalf("holder %s is not a processor", h)
		}
	}
	if err := m.Restart(ctx, c.Index); err != nil {
		t.Fatal(err)
	}
	c = m.Members[c.Index]
	res, err := c.DApp.WaitVerdict(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Output.Equals(out) {
		t.Fatalf("the verdict names %s, the finalizer held %s", res.Output, out)
	}
	checkOutput(t, m, job, res.Output, info.Output.Kind)
}

// TestVerdictAfterHoldWaitWithNoSecondHolder: a lone processor whose
// creator's node has gone cannot hand the output to anyone. It writes its
// verdict anyway once HoldWait is over since it held the output, and
// counts it.
func TestVerdictAfterHoldWaitWithNoSecondHolder(t *testing.T) {
	const holdWait = 3 * time.Second
	m := flowMesh(t, 1, func(_ *localmesh.Member, pc *processor.Config) { pc.HoldWait = holdWait })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 128, 96, 32)
	c := client(m)
	info, err := c.DApp.Submit(ctx, specFor(m, job, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	boot := leaveJob(t, ctx, m, c, info)
	proc := processorsOf(m)[0]
	self := proc.Host.ID()
	var verdict, holder crdt.Record
	wait.Until(t, 2*time.Minute, func() error {
		if verdict, err = boot.Store.Get(ctx, records.VerdictKey(id, self.String())); err != nil {
			return fmt.Errorf("verdict: %w", err)
		}
		if holder, err = boot.Store.Get(ctx, records.HolderKey(id, self)); err != nil {
			return fmt.Errorf("holder record: %w", err)
		}
		return nil
	})
	if waited := verdict.Time().Sub(holder.Time()); waited < holdWait {
		t.Fatalf("the verdict came %s after the holder record, before HoldWait (%s)", waited, holdWait)
	}
	if n := counterSum(t, proc.Metrics, "jobmesh_processor_verdicts_single_holder_total"); n != 1 {
		t.Fatalf("verdicts with a single holder counted %v times, want 1", n)
	}
	holders, err := finish.Holders(ctx, boot.Store, boot.IPFS, id)
	if err != nil || !slices.Equal(holders, []peer.ID{self}) {
		t.Fatalf("holders %v (%v), want the processor alone", holders, err)
	}
}

// leaveJob has the bootstrap node keep job info's inputs and learn the
// job, then stops the creator's node c; it returns the bootstrap node.
func leaveJob(t *testing.T, ctx context.Context, m *localmesh.Mesh, c *localmesh.Member, info *jobs.JobInfo) *localmesh.Member {
	t.Helper()
	boot := m.Bootstrap()
	for _, u := range []string{info.Code.URI, info.Data.URI} {
		k, err := cid.Decode(strings.TrimPrefix(u, "ipfs://"))
		if err != nil {
			t.Fatal(err)
		}
		if err := boot.IPFS.Pin(ctx, k, "test"); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(t, time.Minute, func() error {
		_, err := boot.Store.Get(ctx, records.JobKey(info.ID()))
		return err
	})
	if err := m.Stop(c.Index); err != nil {
		t.Fatal(err)
	}
	return boot
}

// checkOutput reads output out through the client's node and compares
// it with the local run's, by hash.
func checkOutput(t *testing.T, m *localmesh.Mesh, job mandelbrotJob, out cid.Cid, kind string) {
	t.Helper()
	got := output(t, m, dapp.Result{Output: out}, kind)
	want := job.Local(t)
	if sha256.Sum256(got) != sha256.Sum256(want) || !bytes.Equal(got, want) {
		t.Fatalf("output %s (%d bytes, sha256 %x) is not the local run's (%d bytes, sha256 %x)", out, len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
	}
}
