package processor_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
)

// TestSilentDAppLapsesAndStillPays: a DApp whose node goes away right
// after submitting never reveals its check seed. RevealTimeout after the
// last regular commitment the processors draw the verifiers from the
// lapse seed, finish the job and settle it with a zero seed: the
// processors are paid the whole price and the creator gets nothing back
// for its silence.
func TestSilentDAppLapsesAndStillPays(t *testing.T) {
	m := chainMesh(t, 3, nil)
	ctx, c, info := submitSmall(t, m)
	leaveJob(t, ctx, m, c, info)
	rel, err := m.Escrow.WaitReleased(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())))
	if err != nil {
		t.Fatal(err)
	}
	// The bootstrap node has no chain, so no job stores: the verdict is
	// read where the job's records are, on a processor of the job
	// (members 1 to 3).
	var chosen finish.ChosenVerdict
	wait.Until(t, time.Minute, func() (err error) {
		chosen, err = finish.ReadVerdict(ctx, m.Members[1].Store, nil, info.ID(), nil)
		return err
	})
	v := chosen.Verdict
	seed, err := jobs.ParseHash(v.CheckSeed)
	if err != nil || jobs.CommitSeed(seed) == info.SeedCommitment {
		t.Fatalf("verdict's check seed %q: %v; want the lapse seed, not the DApp's secret", v.CheckSeed, err)
	}
	if len(v.VerifierHashes) == 0 || !v.Verified {
		t.Fatalf("a lapsed job is checked all the same: verified %v, verifier hashes %v", v.Verified, v.VerifierHashes)
	}
	if rel.Refund.Sign() != 0 {
		t.Fatalf("the silent creator got %v back", rel.Refund)
	}
	checkRelease(t, m, info, dapp.Result{Verdict: v, Culprits: chosen.Record.Culprits, Release: rel})
}

// TestLateRevealWinsOverTheLapse: a DApp's node goes away before it
// reveals its check seed, and the processors draw the verifiers from the
// lapse seed; the runs of those verifiers are held. Then the node comes
// back and reveals. A valid reveal wins over the lapse for whoever judges
// the job, so verifiers of the lapse seed would never count: every
// processor draws the checks again from the reveal, and the job is
// verified on the DApp's seed.
func TestLateRevealWinsOverTheLapse(t *testing.T) {
	var (
		regulars atomic.Pointer[map[jobs.ID]bool]
		held     = make(chan struct{})
		heldOnce sync.Once
		release  = make(chan struct{})
	)
	m := flowMesh(t, 3, func(_ *localmesh.Member, pc *processor.Config) {
		pc.Hold = func(ctx context.Context, _, micro jobs.ID) {
			if r := regulars.Load(); r == nil || (*r)[micro] {
				return
			}
			heldOnce.Do(func() { close(held) })
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	})
	ctx, c, info := submitSmall(t, m)
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[jobs.ID]bool{}
	for _, mj := range plan.Macros {
		for _, mu := range mj.Micros {
			ids[mu.ID] = true
		}
	}
	regulars.Store(&ids)
	leaveJob(t, ctx, m, c, info)
	// A verifier is about to run: its processor lapsed, as no reveal
	// was written.
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("no processor drew the lapse seed's verifiers")
	}
	lapsed := 0
	for _, mem := range processorsOf(m) {
		if src, _, ok := mem.Worker.Checks(info.ID()); ok && src == finish.CheckLapsed {
			lapsed++
		}
	}
	if lapsed == 0 {
		t.Fatal("a verifier runs, but no processor says it lapsed")
	}
	if err := m.Restart(ctx, c.Index); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, func() error {
		for _, mem := range processorsOf(m) {
			src, seed, ok := mem.Worker.Checks(info.ID())
			if !ok || src != finish.CheckRevealed || jobs.CommitSeed(seed) != info.SeedCommitment {
				return fmt.Errorf("processor %d: checks %v, seed %s (%d processors had lapsed)", mem.Index, src, seed, lapsed)
			}
		}
		return nil
	})
	// Each processor that lapsed drew again, once, and says so.
	for _, mem := range processorsOf(m) {
		lapsedHere := counterWith(t, mem, "jobmesh_processor_checks_drawn_total", "source", "lapsed")
		if redrawn := counterWith(t, mem, "jobmesh_processor_checks_drawn_total", "source", "redrawn"); redrawn != lapsedHere {
			t.Fatalf("processor %d: checks drawn from the lapse seed %v times, drawn again %v times", mem.Index, lapsedHere, redrawn)
		}
	}
	close(release)
	var chosen finish.ChosenVerdict
	wait.Until(t, 2*time.Minute, func() (err error) {
		chosen, err = finish.ReadVerdict(ctx, m.Members[1].Store, nil, info.ID(), nil)
		return err
	})
	v := chosen.Verdict
	seed, err := jobs.ParseHash(v.CheckSeed)
	if err != nil || jobs.CommitSeed(seed) != info.SeedCommitment {
		t.Fatalf("verdict's check seed %q (%v): want the DApp's revealed secret", v.CheckSeed, err)
	}
	if !v.Verified || len(v.VerifierHashes) == 0 || len(chosen.Record.Culprits) != 0 {
		t.Fatalf("verified %v, verifier hashes %v, culprits %v: want verified on the reveal, nobody framed", v.Verified, v.VerifierHashes, chosen.Record.Culprits)
	}
}

// submitSmall submits a small Mandelbrot job from m's client, within a
// context that bounds the test.
func submitSmall(t *testing.T, m *localmesh.Mesh) (context.Context, *localmesh.Member, *jobs.JobInfo) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	c := client(m)
	info, err := c.DApp.Submit(ctx, newMandelbrot(t, 128, 96, 32).spec(2, 3))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c, info
}
