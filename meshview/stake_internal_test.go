package meshview

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/escrow"
)

// slashable is a chain whose stake figure the test changes.
type slashable struct {
	stake *big.Int
	reads int
}

func (s *slashable) StakeOf(context.Context, common.Address) (escrow.Stake, error) {
	s.reads++
	return escrow.Stake{Active: new(big.Int).Set(s.stake)}, nil
}

// TestNamedCulpritsStakeIsReadAfresh: a stake is read from the chain once
// per StakeTTL, except for a processor a finished job named culprit
// within the last StakeTTL: its settlement slashes it, and a cached
// figure would keep weighing it, and drawing it to re-run, for minutes.
func TestNamedCulpritsStakeIsReadAfresh(t *testing.T) {
	cl := crdttest.New(t, crdttest.Options{Replicas: 1})
	chain := &slashable{stake: big.NewInt(100)}
	now := time.Now()
	f, err := NewFacts(FactsParams{Store: cl.Replicas[0].Store, Stakes: chain, Now: func() time.Time { return now }}, DefaultFactsConfig())
	if err != nil {
		t.Fatal(err)
	}
	const wallet, peer = "0x00000000000000000000000000000000000000aa", "12D3KooWpeer"
	ctx := context.Background()
	read := func() int64 { return f.stake(ctx, wallet, now, f.wasNamed(peer, now)).Int64() }
	if got := read(); got != 100 {
		t.Fatalf("stake %d, want 100", got)
	}
	chain.stake.SetInt64(0) // slashed
	if got := read(); got != 100 || chain.reads != 1 {
		t.Fatalf("a processor nobody named: stake %d after %d reads, want the cached 100 after 1", got, chain.reads)
	}
	f.mu.Lock()
	f.named[peer] = now.Add(f.cfg.StakeTTL)
	f.mu.Unlock()
	if got := read(); got != 0 {
		t.Fatalf("a named culprit: stake %d, want the slashed 0", got)
	}
	now = now.Add(f.cfg.StakeTTL)
	if f.wasNamed(peer, now) {
		t.Fatal("still read afresh a StakeTTL after it was named")
	}
}
