package membership

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
)

// TestStakersCountOnlyStakeBeforeTheJob: on a real escrow, a wallet that
// staked before a job was created may re-run its blocks and one that
// staked after it may not (it could have searched for a key after seeing
// the job), nor one that asked to unstake before it; each answer is read
// from the chain's logs once.
func TestStakersCountOnlyStakeBeforeTheJob(t *testing.T) {
	ctx := context.Background()
	_, deploy, client := simEscrow(t)
	reg := prometheus.NewRegistry()
	reader, creator, early, late, leaving := client(1, reg), client(2, nil), client(3, nil), client(4, nil), client(5, nil)
	if _, err := early.Stake(ctx, deploy.MinStake); err != nil {
		t.Fatal(err)
	}
	if _, err := leaving.Stake(ctx, deploy.MinStake); err != nil {
		t.Fatal(err)
	}
	if _, err := leaving.RequestUnstake(ctx, deploy.MinStake); err != nil {
		t.Fatal(err)
	}
	info := &jobs.JobInfo{Creator: jobs.Address(creator.From()), PriceWei: big.NewInt(1000), Deadline: time.Now().Add(time.Hour).Unix()}
	rcpt, err := creator.CreateJob(ctx, common.Hash(info.ID()), escrow.SeedCommitment(common.Hash{2}), time.Now().Add(time.Hour),
		escrow.Terms{Quiet: time.Second, MinSigners: 1}, info.PriceWei)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.Stake(ctx, deploy.MinStake); err != nil {
		t.Fatal(err)
	}
	s := NewStakers(reader)
	for range 2 {
		for _, tc := range []struct {
			c    *escrow.Client
			want bool
		}{{early, true}, {late, false}, {creator, false}, {leaving, false}} {
			got, err := s.StakedBefore(ctx, info, tc.c.From())
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s staked before the job: %t, want %t", tc.c.From(), got, tc.want)
			}
		}
	}
	if n := escrowReads(t, reg, "logs"); n != 13 {
		t.Fatalf("%v log reads, want 13: the job's creation and four wallets' three event kinds, once each", n)
	}
	// The re-run candidates: the early staker only, salted with the hash
	// of the block that created the job.
	bound := func(_ context.Context, peer string) (string, bool, error) { return peer, true, nil }
	cands, err := RerunCandidates(bound, s)(ctx, info, []string{early.From().Hex(), late.From().Hex(), leaving.From().Hex()})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].Peer != early.From().Hex() || cands[0].Salt != rcpt.BlockHash.Hex() {
		t.Fatalf("candidates %+v, want the early staker salted with block %s", cands, rcpt.BlockHash.Hex())
	}
}
