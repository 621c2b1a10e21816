package escrow

import (
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// TestStakeHistory: a job's creation block is read from its event, and an
// account counts as staked by that block only when its stake came at or
// before it; a stake that comes later, or a job that does not exist, say
// so.
func TestStakeHistory(t *testing.T) {
	h := newHarness(t, 4)
	h.stake(1, ether(1))
	key, _ := h.createJob(0, ether(1), time.Hour)
	created, err := h.clients[0].CreatedAt(h.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	rcpt, err := h.clients[2].Stake(h.ctx, ether(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i    int
		want bool
	}{{1, true}, {2, false}, {3, false}} {
		got, err := h.clients[0].StakedBy(h.ctx, h.addr(tc.i), created)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("account %d staked by block %d: %t, want %t", tc.i, created, got, tc.want)
		}
	}
	if ok, err := h.clients[0].StakedBy(h.ctx, h.addr(2), rcpt.BlockNumber.Uint64()); err != nil || !ok {
		t.Errorf("account 2 staked by a later block: %t, %v", ok, err)
	}
	if _, err := h.clients[0].CreatedAt(h.ctx, common.Hash{1}); !errors.Is(err, ErrNoSuchJob) {
		t.Errorf("a job never created: %v", err)
	}
}
