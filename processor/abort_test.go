package processor_test

import (
	"context"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestQueueCapAbortsLowestValue: two processors, a cap of one queued job
// (α 0.5), and three jobs no processor can serve (they require a card
// nobody has): the two of lowest value get a JobAborted record, the
// processors skip them, and the creator takes their escrow back through
// the contract's abort; the best one stays funded.
func TestQueueCapAbortsLowestValue(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{
		Processors: 2,
		Clients:    1,
		Chain:      &localmesh.ChainOptions{},
		Configure: func(_ *localmesh.Member, cfg *node.Config) {
			cfg.Dispatch.QueueAlpha = 0.5
			cfg.Dispatch.MinQueueLen = 1
		},
		Processor: func(_ *localmesh.Member, pc *processor.Config) {
			testTimeouts(pc)
			pc.FundingBackoff = 200 * time.Millisecond
			pc.FactsEvery = 200 * time.Millisecond
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, p := range processorsOf(m) {
		if err := waitFor(ctx, func() bool { return p.Worker.View().Live() == 2 }); err != nil {
			t.Fatalf("processor %d sees %d live processors", p.Index, p.Worker.View().Live())
		}
	}
	c := client(m)
	var ids []jobs.ID
	for i, price := range []int64{3_000_000, 1_000_000, 2_000_000} {
		spec := dispatchSpec(100+i, 1, 4, jobs.Requirements{GPUModel: "nobody-has-it"})
		spec.Price = big.NewInt(price)
		spec.Creator = ""
		info, err := c.DApp.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.ID())
	}
	best, aborted := ids[0], ids[1:]
	for _, id := range aborted {
		if err := waitFor(ctx, func() bool {
			j, err := m.Escrow.Job(ctx, escrow.JobKey(c.Wallet, common.Hash(id)))
			return err == nil && j.State == escrow.JobAborted
		}); err != nil {
			t.Fatalf("job %s: not aborted on chain: %v", id, err)
		}
		if _, err := records.ReadAborted(ctx, c.Store, id); err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if _, err := c.DApp.WaitVerdict(ctx, id, 50*time.Millisecond); !errors.Is(err, dapp.ErrAborted) {
			t.Fatalf("waiting for aborted job %s: %v, want ErrAborted", id, err)
		}
	}
	if _, err := records.ReadAborted(ctx, c.Store, best); !errors.Is(err, records.ErrNotAborted) {
		t.Fatalf("best job: %v, want ErrNotAborted", err)
	}
	if j, err := m.Escrow.Job(ctx, escrow.JobKey(c.Wallet, common.Hash(best))); err != nil || j.State != escrow.JobFunded {
		t.Fatalf("best job on chain: %+v, %v; want funded", j, err)
	}
}
