package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
)

// TestSilentDAppLapsesAndStillPays: a DApp whose node goes away right
// after submitting never reveals its check seed. RevealTimeout after the
// last regular commitment the processors draw the verifiers from the
// lapse seed, finish the job and settle it with a zero seed: the
// processors are paid the whole price and the creator gets nothing back
// for its silence.
func TestSilentDAppLapsesAndStillPays(t *testing.T) {
	m := chainMesh(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 128, 96, 32)
	c := client(m)
	info, err := c.DApp.Submit(ctx, job.spec(2, 3))
	if err != nil {
		t.Fatal(err)
	}
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
