package membership

import (
	"context"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
)

// fakeEscrow holds one job, answers membership from its members, and
// refuses a join with joinErr.
type fakeEscrow struct {
	job     escrow.Job
	members map[common.Address]bool
	joinErr error
	reads   int
}

func (e *fakeEscrow) Job(context.Context, common.Hash) (escrow.Job, error) {
	e.reads++
	return e.job, nil
}

func (e *fakeEscrow) Join(_ context.Context, _ common.Hash) (*types.Receipt, error) {
	if e.joinErr != nil {
		return nil, e.joinErr
	}
	e.members[common.Address{1}] = true
	return &types.Receipt{}, nil
}

func (e *fakeEscrow) IsMember(_ context.Context, _ common.Hash, a common.Address) (bool, error) {
	return e.members[a], nil
}

// TestJoinerJoinsFundedJobsAndBacksOff: an unfunded job is read again
// after a backoff that doubles; a funded one is joined and kept; a join
// the escrow refuses for good keeps the processor off the job, counted
// once.
func TestJoinerJoinsFundedJobsAndBacksOff(t *testing.T) {
	ctx := context.Background()
	info := &jobs.JobInfo{PriceWei: big.NewInt(100), Deadline: 1 << 32}
	id := info.ID()
	now := time.Unix(1000, 0)
	e := &fakeEscrow{members: map[common.Address]bool{},
		job: escrow.Job{State: escrow.JobFunded, Amount: big.NewInt(99), Deadline: now.Add(time.Hour)}}
	reg := prometheus.NewRegistry()
	view := NewView(e, time.Second, reg, slog.New(slog.DiscardHandler))
	j := NewJoiner(e, view, JoinConfig{Wallet: common.Address{1}, Backoff: time.Second}, reg, slog.New(slog.DiscardHandler))
	funded := func(at time.Duration, want bool, reads int) {
		t.Helper()
		if got := j.Funded(ctx, id, info, now.Add(at)); got != want || e.reads != reads {
			t.Fatalf("at +%v: funded %v after %d reads, want %v after %d", at, got, e.reads, want, reads)
		}
	}
	funded(0, false, 1)               // under its price
	funded(time.Second-1, false, 1)   // the backoff is not over
	funded(time.Second, false, 2)     // read again, still under its price
	funded(3*time.Second-1, false, 2) // the second wait is twice as long
	e.job.Amount = big.NewInt(100)
	funded(3*time.Second, true, 3)
	if !e.members[common.Address{1}] {
		t.Fatal("the processor did not join the funded job")
	}
	funded(time.Hour, true, 3) // a yes is kept
	if n := crdttest.Metric(t, reg, "jobmesh_processor_unfunded_skips_total", nil); n != 2 {
		t.Fatalf("%v unfunded skips, want 2", n)
	}

	closed := &jobs.JobInfo{PriceWei: big.NewInt(100), Deadline: 2 << 32}
	e.members = map[common.Address]bool{}
	e.joinErr = &escrow.RevertError{Name: "JoinClosed"}
	for range 3 {
		if j.Funded(ctx, closed.ID(), closed, now.Add(time.Minute)) {
			t.Fatal("a refused join counts as funded")
		}
	}
	if n := crdttest.Metric(t, reg, "jobmesh_processor_join_refusals_total", map[string]string{"reason": "closed"}); n != 1 {
		t.Fatalf("%v join refusals, want 1", n)
	}
}
