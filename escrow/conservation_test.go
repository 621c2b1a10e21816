package escrow

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// books checks that the contract holds exactly what it owes: the escrow of
// every funded job, every credit, every stake active or pending, and the
// stake it burned.
func (h *harness) books(ctx context.Context) error {
	c := h.clients[0]
	var accounts []common.Address
	for i := range h.keys {
		accounts = append(accounts, h.addr(i))
	}
	owed, err := c.Owed(ctx, h.jobs, accounts)
	if err != nil {
		return err
	}
	if held := h.balanceCtx(ctx, c.Address()); held.Cmp(owed) != 0 {
		return errors.New("contract holds " + held.String() + " but owes " + owed.String())
	}
	return nil
}

// conservationRun is the state of one randomized run.
type conservationRun struct {
	h     *harness
	rng   *rand.Rand
	seeds map[common.Hash]common.Hash // job key -> seed
	done  map[string]int              // successful operations by name
}

// TestValueConservedUnderRandomOps drives the escrow through a few hundred
// random operations under a fixed seed (createJob, join, stake,
// requestUnstake, withdrawStake, valid and invalid settles, refund, abort,
// withdraw, time passing) and checks after every step that the contract
// holds exactly what it owes. Every operation either succeeds or reverts
// with a decoded contract error; each kind must succeed at least once.
func TestValueConservedUnderRandomOps(t *testing.T) {
	const steps = 300
	h := newHarness(t, 8)
	r := &conservationRun{h: h, rng: rand.New(rand.NewPCG(19, 2025)), seeds: map[common.Hash]common.Hash{}, done: map[string]int{}}
	ops := []struct {
		name   string
		weight int
		do     func() error
	}{
		{"createJob", 3, r.createJob},
		{"join", 5, r.join},
		{"stake", 3, r.stake},
		{"requestUnstake", 1, r.requestUnstake},
		{"withdrawStake", 1, r.withdrawStake},
		{"settle", 3, func() error { return r.settle(false) }},
		{"badSettle", 2, func() error { return r.settle(true) }},
		{"refund", 1, r.refund},
		{"abort", 1, r.abort},
		{"withdraw", 2, r.withdraw},
		{"advanceTime", 2, r.advanceTime},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	for step := range steps {
		pick := r.rng.IntN(total)
		for _, op := range ops {
			if pick -= op.weight; pick >= 0 {
				continue
			}
			err := op.do()
			switch {
			case err == nil:
				r.done[op.name]++
			case !errors.Is(err, ErrReverted):
				t.Fatalf("step %d (%s): %v", step, op.name, err)
			}
			break
		}
		if err := h.books(h.ctx); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	for _, op := range ops {
		if op.name != "badSettle" && r.done[op.name] == 0 {
			t.Errorf("no %s succeeded in %d steps: the run exercises too little", op.name, steps)
		}
	}
	if r.done["badSettle"] != 0 {
		t.Errorf("%d invalid settlements went through", r.done["badSettle"])
	}
	burned, err := h.clients[0].TotalBurned(h.ctx)
	if err != nil || burned.Sign() == 0 {
		t.Errorf("no stake was burned (%v): the run never slashed", err)
	}
	t.Logf("succeeded: %v", r.done)
}

func (r *conservationRun) account() int { return r.rng.IntN(len(r.h.keys)) }

// job is a random job, most often one that want accepts.
func (r *conservationRun) job(want func(j Job, now time.Time) bool) common.Hash {
	if len(r.h.jobs) == 0 {
		return common.Hash{}
	}
	if r.rng.IntN(5) > 0 {
		var funded []common.Hash
		now := r.h.headTime()
		for _, key := range r.h.jobs {
			j, err := r.h.clients[0].Job(r.h.ctx, key)
			if err == nil && want(j, now) {
				funded = append(funded, key)
			}
		}
		if len(funded) > 0 {
			return funded[r.rng.IntN(len(funded))]
		}
	}
	return r.h.jobs[r.rng.IntN(len(r.h.jobs))]
}

// staked is a random account, most often one with the minimum stake.
func (r *conservationRun) staked() int {
	if r.rng.IntN(5) > 0 {
		var ok []int
		for i := range r.h.keys {
			if st, err := r.h.clients[0].StakeOf(r.h.ctx, r.h.addr(i)); err == nil && st.Active.Cmp(oneEther) >= 0 {
				ok = append(ok, i)
			}
		}
		if len(ok) > 0 {
			return ok[r.rng.IntN(len(ok))]
		}
	}
	return r.account()
}

func (r *conservationRun) createJob() error {
	h := r.h
	i := r.account()
	jobID := common.Hash{byte(len(h.jobs)), 0xc0}
	seed := common.Hash{byte(len(h.jobs)), 0x5e}
	terms := Terms{Quiet: time.Duration(r.rng.IntN(3)) * time.Minute, MinSigners: uint8(1 + r.rng.IntN(2))}
	ttl := time.Duration(30+r.rng.IntN(90)) * time.Minute
	price := milli(int64(1 + r.rng.IntN(3000)))
	_, err := h.clients[i].CreateJob(h.ctx, jobID, SeedCommitment(seed), h.headTime().Add(ttl), terms, price)
	if err == nil {
		key := h.clients[i].KeyOf(jobID)
		h.jobs = append(h.jobs, key)
		r.seeds[key] = seed
	}
	return err
}

// open accepts a funded job before its deadline.
func open(j Job, now time.Time) bool { return j.State == JobFunded && j.Deadline.After(now) }

func (r *conservationRun) join() error {
	_, err := r.h.clients[r.staked()].Join(r.h.ctx, r.job(open))
	return err
}

func (r *conservationRun) stake() error {
	_, err := r.h.clients[r.account()].Stake(r.h.ctx, milli(int64(500+r.rng.IntN(1500))))
	return err
}

func (r *conservationRun) requestUnstake() error {
	_, err := r.h.clients[r.account()].RequestUnstake(r.h.ctx, milli(int64(1+r.rng.IntN(1000))))
	return err
}

func (r *conservationRun) withdrawStake() error {
	_, err := r.h.clients[r.account()].WithdrawStake(r.h.ctx)
	return err
}

func (r *conservationRun) refund() error {
	expired := func(j Job, now time.Time) bool { return j.State == JobFunded && !j.Deadline.After(now) }
	_, err := r.h.clients[r.account()].Refund(r.h.ctx, r.job(expired))
	return err
}

// abort is sent by the job's creator, most often.
func (r *conservationRun) abort() error {
	key := r.job(func(j Job, now time.Time) bool { return open(j, now) && j.Members == 0 })
	sender := r.account()
	if j, err := r.h.clients[0].Job(r.h.ctx, key); err == nil && j.State != JobNone && r.rng.IntN(5) > 0 {
		for i := range r.h.keys {
			if r.h.addr(i) == j.Creator {
				sender = i
			}
		}
	}
	_, err := r.h.clients[sender].Abort(r.h.ctx, key)
	return err
}

func (r *conservationRun) withdraw() error {
	_, err := r.h.clients[r.account()].Withdraw(r.h.ctx)
	return err
}

func (r *conservationRun) advanceTime() error {
	d := time.Duration(1+r.rng.IntN(5)) * time.Minute
	if r.rng.IntN(6) == 0 {
		d = time.Hour // past deadlines, into refunds and withdrawable stake
	}
	return r.h.chain.AdvanceTime(d)
}

// settle builds a settlement of a random job from its members: random
// payees and culprits among them, signed by every member with stake. A
// bad one breaks it in one of the ways the contract must refuse.
func (r *conservationRun) settle(bad bool) error {
	h := r.h
	key := r.job(func(j Job, now time.Time) bool { return open(j, now) && j.Members > 0 })
	j, err := h.clients[0].Job(h.ctx, key)
	if err != nil {
		return err
	}
	minStake, err := h.clients[0].MinStake(h.ctx)
	if err != nil {
		return err
	}
	var payees, culprits, signers []int
	for i := range h.keys {
		m, err := h.clients[0].IsMember(h.ctx, key, h.addr(i))
		if err != nil {
			return err
		}
		if !m {
			continue
		}
		switch r.rng.IntN(4) {
		case 0:
			culprits = append(culprits, i)
		default:
			payees = append(payees, i)
		}
		if st, err := h.clients[0].StakeOf(h.ctx, h.addr(i)); err == nil && st.Active.Cmp(minStake) >= 0 {
			signers = append(signers, i)
		}
	}
	if len(payees) == 0 {
		payees = append(payees, r.account())
	}
	amount := new(big.Int)
	if j.Amount != nil && j.Amount.Sign() > 0 {
		amount.Div(j.Amount, big.NewInt(int64(len(payees)+r.rng.IntN(2))))
	}
	seed := r.seeds[key]
	if bad {
		switch r.rng.IntN(4) {
		case 0:
			seed = common.Hash{0xba, 0xd}
		case 1:
			amount.Add(amount, j.Amount) // over-payment
		case 2:
			payees = append(payees, len(h.keys)-1-r.rng.IntN(2)) // likely a non-member
			if j.Members == len(h.keys) {
				seed = common.Hash{0xba, 0xd}
			}
		default:
			if len(signers) > 0 {
				signers = signers[:len(signers)-1] // one signature short of all
			}
			if len(signers) == 0 || j.Terms.MinSigners > 1 {
				seed = common.Hash{0xba, 0xd}
			} else {
				culprits = append(culprits, payees[0]) // a paid culprit
			}
		}
	}
	s := h.settlement(key, seed, amount, dedupe(payees), dedupe(culprits))
	sender := r.account()
	_, err = h.rawSettle(sender, s, h.sign(h.clients[0].Domain(), s, signers...))
	return err
}

func dedupe(list []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, i := range list {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}
