package escrow

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
)

// gasOf measures, on a fresh simulated chain, the gas of createJob and of a
// settle paying n staked payees that all sign.
func gasOf(tb testing.TB, n int) (create, settle uint64) {
	h := newHarness(tb, n+1)
	for i := 1; i <= n; i++ {
		h.stake(i, ether(1))
	}
	price := ether(int64(n))
	jobID := [32]byte{byte(n), 1}
	seed := [32]byte{byte(n), 2}
	rcpt, err := h.clients[0].CreateJob(h.ctx, jobID, SeedCommitment(seed), h.headTime().Add(time.Hour), price)
	if err != nil {
		tb.Fatal(err)
	}
	h.jobs = append(h.jobs, jobID)
	create = rcpt.GasUsed
	payees := make([]int, n)
	for i := range payees {
		payees[i] = i + 1
	}
	s := h.settlement(jobID, seed, new(big.Int).Div(oneEther, big.NewInt(2)), payees, nil)
	rcpt, err = h.clients[0].Settle(h.ctx, s, h.sign(h.clients[0].Domain(), s, payees...))
	if err != nil {
		tb.Fatal(err)
	}
	return create, rcpt.GasUsed
}

// TestGasBudget holds the contract to its gas targets: createJob at most
// 80k, settle at most 60k + 30k per payee. Gas is deterministic, so this is
// a plain assertion; BenchmarkGas reports the figures.
func TestGasBudget(t *testing.T) {
	for _, n := range []int{1, 10, 50} {
		create, settle := gasOf(t, n)
		if create > 80_000 {
			t.Errorf("createJob: %d gas, target 80000", create)
		}
		if limit := uint64(60_000 + 30_000*n); settle > limit {
			t.Errorf("settle with %d payees: %d gas, target %d", n, settle, limit)
		}
		t.Logf("payees=%d createJob=%d settle=%d (%.0f per payee over 60k)", n, create, settle, float64(int64(settle)-60_000)/float64(n))
	}
}

func BenchmarkGas(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("payees=%d", n), func(b *testing.B) {
			var create, settle uint64
			for b.Loop() {
				create, settle = gasOf(b, n)
			}
			b.ReportMetric(float64(create), "createJob-gas")
			b.ReportMetric(float64(settle), "settle-gas")
			b.ReportMetric(float64(settle)/float64(n), "settle-gas/payee")
		})
	}
}

// BenchmarkGasOps reports the gas of the other escrow operations.
func BenchmarkGasOps(b *testing.B) {
	var gas map[string]uint64
	for b.Loop() {
		gas = map[string]uint64{}
		h := newHarness(b, 2)
		record := func(name string, rcpt *types.Receipt, err error) {
			if err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			gas[name] = rcpt.GasUsed
		}
		rcpt, err := h.clients[1].Stake(h.ctx, ether(2))
		record("stake", rcpt, err)
		rcpt, err = h.clients[1].RequestUnstake(h.ctx, ether(1))
		record("requestUnstake", rcpt, err)
		if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
			b.Fatal(err)
		}
		rcpt, err = h.clients[1].WithdrawStake(h.ctx)
		record("withdrawStake", rcpt, err)
		jobA, _ := h.createJob(0, ether(1), time.Hour)
		rcpt, err = h.clients[0].Abort(h.ctx, jobA)
		record("abort", rcpt, err)
		jobB, _ := h.createJob(0, ether(1), time.Hour)
		if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
			b.Fatal(err)
		}
		rcpt, err = h.clients[1].Refund(h.ctx, jobB)
		record("refund", rcpt, err)
		rcpt, err = h.clients[0].Withdraw(h.ctx)
		record("withdraw", rcpt, err)
	}
	for name, g := range gas {
		b.ReportMetric(float64(g), name+"-gas")
	}
}
