package escrow

import (
	"math/big"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestEarningsWatch: the gauges follow an account's credit as refunds
// credit it and a withdrawal pays it out; another account's money moves
// none of them.
func TestEarningsWatch(t *testing.T) {
	h := newHarness(t, 3)
	const me, other = 1, 2
	reg := prometheus.NewRegistry()
	w, err := NewEarningsWatch(h.clients[0], h.addr(me), reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := w.Last(); ok {
		t.Fatal("Last reports earnings before any Refresh")
	}
	check := func(credit, withdrawn *big.Int) {
		t.Helper()
		e, err := w.Refresh(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Credit.Cmp(credit) != 0 || e.Withdrawn.Cmp(withdrawn) != 0 {
			t.Fatalf("earnings: credit %v, withdrawn %v; want %v, %v", e.Credit, e.Withdrawn, credit, withdrawn)
		}
		last, _, ok := w.Last()
		if !ok || last.Credited().Cmp(new(big.Int).Add(credit, withdrawn)) != 0 {
			t.Fatalf("Last: %+v, %v", last, ok)
		}
		for _, g := range []struct {
			name  string
			gauge prometheus.Gauge
			want  *big.Int
		}{{"credit", w.credit, credit}, {"withdrawn", w.withdrawn, withdrawn}, {"credited", w.credited, new(big.Int).Add(credit, withdrawn)}} {
			if got := testutil.ToFloat64(g.gauge); got != weiFloat(g.want) {
				t.Errorf("jobmesh_escrow_%s_wei = %v, want %v", g.name, got, g.want)
			}
		}
	}
	refund := func(i int, price *big.Int) {
		t.Helper()
		key, _ := h.createJob(i, price, time.Hour)
		if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := h.clients[other].Refund(h.ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	zero := new(big.Int)
	check(zero, zero)
	refund(me, ether(5))
	refund(other, ether(3))
	check(ether(5), zero)
	if _, err := h.clients[me].Withdraw(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.clients[other].Withdraw(h.ctx); err != nil {
		t.Fatal(err)
	}
	check(zero, ether(5))
	refund(me, ether(2))
	check(ether(2), ether(5))
	if n, err := testutil.GatherAndCount(reg, "jobmesh_escrow_credit_wei", "jobmesh_escrow_withdrawn_wei", "jobmesh_escrow_credited_wei"); err != nil || n != 3 {
		t.Fatalf("registered gauges: %d, %v", n, err)
	}
}
