package escrow

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
)

// gasFigures are the gas of one job's life: its createJob, the most any
// of its joins cost, and a settle paying n staked members that all sign.
type gasFigures struct{ create, join, settle uint64 }

// gasOf measures the figures for n payees on a fresh simulated chain, the
// job's terms as strict as the test settles under (every payee signs).
func gasOf(tb testing.TB, n int) gasFigures {
	h := newHarness(tb, n+1)
	for i := 1; i <= n; i++ {
		h.stake(i, ether(1))
	}
	var g gasFigures
	jobID := [32]byte{byte(n), 1}
	seed := [32]byte{byte(n), 2}
	rcpt, err := h.clients[0].CreateJob(h.ctx, jobID, SeedCommitment(seed), h.headTime().Add(time.Hour),
		Terms{Quiet: time.Minute, MinSigners: uint8(n)}, ether(int64(n)))
	if err != nil {
		tb.Fatal(err)
	}
	key := h.clients[0].KeyOf(jobID)
	h.jobs = append(h.jobs, key)
	g.create = rcpt.GasUsed
	payees := make([]int, n)
	for i := range payees {
		payees[i] = i + 1
		rcpt, err := h.clients[i+1].Join(h.ctx, key)
		if err != nil {
			tb.Fatal(err)
		}
		g.join = max(g.join, rcpt.GasUsed)
	}
	if err := h.chain.AdvanceTime(time.Minute); err != nil {
		tb.Fatal(err)
	}
	s := h.settlement(key, seed, new(big.Int).Div(oneEther, big.NewInt(2)), payees, nil)
	rcpt, err = h.clients[0].Settle(h.ctx, s, h.sign(h.clients[0].Domain(), s, payees...))
	if err != nil {
		tb.Fatal(err)
	}
	g.settle = rcpt.GasUsed
	return g
}

// TestGasBudget holds the contract to its gas targets: createJob at most
// 100k, join at most 75k, settle at most 60k + 30k per signing payee. Gas
// is deterministic, so this is a plain assertion; BenchmarkGas reports the
// figures.
func TestGasBudget(t *testing.T) {
	for _, n := range []int{1, 10, 50} {
		g := gasOf(t, n)
		if g.create > 100_000 {
			t.Errorf("createJob: %d gas, target 100000", g.create)
		}
		if g.join > 75_000 {
			t.Errorf("join: %d gas, target 75000", g.join)
		}
		if limit := uint64(60_000 + 30_000*n); g.settle > limit {
			t.Errorf("settle with %d signing payees: %d gas, target %d", n, g.settle, limit)
		}
		t.Logf("payees=%d createJob=%d join=%d settle=%d (%.0f per payee over 60k)", n, g.create, g.join, g.settle, float64(int64(g.settle)-60_000)/float64(n))
	}
}

func BenchmarkGas(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("payees=%d", n), func(b *testing.B) {
			var g gasFigures
			for b.Loop() {
				g = gasOf(b, n)
			}
			b.ReportMetric(float64(g.create), "createJob-gas")
			b.ReportMetric(float64(g.join), "join-gas")
			b.ReportMetric(float64(g.settle), "settle-gas")
			b.ReportMetric(float64(g.settle)/float64(n), "settle-gas/payee")
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
