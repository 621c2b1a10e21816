package escrow

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// TestStakeHistory: a job's creation block is read from its event, and
// an account's active stake at that block is replayed from its events: a
// stake that comes later does not count, nor one whose unstake was
// requested before; a job that does not exist says so.
func TestStakeHistory(t *testing.T) {
	h := newHarness(t, 4)
	h.stake(1, ether(2))
	h.stake(3, ether(1))
	if _, err := h.clients[3].RequestUnstake(h.ctx, ether(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.clients[1].RequestUnstake(h.ctx, ether(1)); err != nil {
		t.Fatal(err)
	}
	key, _ := h.createJob(0, ether(1), time.Hour)
	created, hash, err := h.clients[0].CreatedAt(h.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if head, err := h.backend.HeaderByNumber(h.ctx, new(big.Int).SetUint64(created)); err != nil || head.Hash() != hash {
		t.Fatalf("created in block %d with hash %s, the chain says %v (%v)", created, hash, head, err)
	}
	rcpt, err := h.clients[2].Stake(h.ctx, ether(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i     int
		block uint64
		want  *big.Int
	}{{1, created, ether(1)}, {2, created, new(big.Int)}, {3, created, new(big.Int)}, {2, rcpt.BlockNumber.Uint64(), ether(1)}} {
		got, err := h.clients[0].ActiveStakeAt(h.ctx, h.addr(tc.i), tc.block)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cmp(tc.want) != 0 {
			t.Errorf("account %d's stake at block %d: %v, want %v", tc.i, tc.block, got, tc.want)
		}
	}
	if _, _, err := h.clients[0].CreatedAt(h.ctx, common.Hash{1}); !errors.Is(err, ErrNoSuchJob) {
		t.Errorf("a job never created: %v", err)
	}
}
