package escrow

import (
	"bytes"
	"errors"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Accounts in these tests: 0 deploys and creates jobs, 1..3 are staked
// processors, 4 is a processor without stake, 5 is an outsider.
const (
	creator   = 0
	unstaked  = 4
	outsider  = 5
	nAccounts = 6
)

func stakedHarness(t *testing.T) *harness {
	h := newHarness(t, nAccounts)
	for i := 1; i <= 3; i++ {
		h.stake(i, ether(2))
	}
	return h
}

func TestSettleReleasesEscrow(t *testing.T) {
	h := stakedHarness(t)
	price := ether(10)
	jobID, seed := h.createJob(creator, price, time.Hour)

	j, err := h.clients[0].Job(h.ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != JobFunded || j.Amount.Cmp(price) != 0 || j.Creator != h.addr(creator) || j.ClosedAtBlock != 0 ||
		j.Members != 0 || !j.LastJoin.IsZero() || j.Terms != looseTerms {
		t.Fatalf("job after create: %+v", j)
	}
	h.join(jobID, 1, 2, 3)
	j, err = h.clients[0].Job(h.ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Members != 3 || !j.LastJoin.Equal(h.headTime()) {
		t.Fatalf("job after joins: %+v (head %v)", j, h.headTime())
	}
	for _, i := range []int{1, 2, 3, outsider} {
		if m, err := h.clients[0].IsMember(h.ctx, jobID, h.addr(i)); err != nil || m != (i != outsider) {
			t.Fatalf("isMember(%d) = %v, %v", i, m, err)
		}
	}

	s := h.settlement(jobID, seed, ether(3), []int{1, 2, 3}, nil)
	d := h.clients[outsider].Domain()
	sigs := h.sign(d, s, 1, 2) // 2 of 3 members: exactly the quorum
	for _, sb := range sigs {
		if err := VerifySettlement(d, s, sb.Signer, sb.Signature); err != nil {
			t.Fatalf("own signature does not verify: %v", err)
		}
	}
	// Anyone may submit a settlement; an outsider does here.
	rcpt, err := h.clients[outsider].Settle(h.ctx, s, sigs)
	if err != nil {
		t.Fatalf("settle: %v", err)
	}
	h.expectEvents(rcpt, "EscrowReleased")

	rel, err := h.clients[creator].WaitReleased(h.ctx, jobID)
	if err != nil {
		t.Fatalf("wait released: %v", err)
	}
	if rel.Block != rcpt.BlockNumber.Uint64() || rel.TxHash != rcpt.TxHash || rel.ResultRoot != s.ResultRoot || rel.VerifierHash != s.VerifierHash {
		t.Fatalf("release %+v does not match receipt", rel)
	}
	if len(rel.Payees) != 3 || rel.Refund.Cmp(ether(1)) != 0 {
		t.Fatalf("release payees %v refund %v", rel.Payees, rel.Refund)
	}
	for i, p := range rel.Payees {
		if p != s.Payees[i] || rel.Amounts[i].Cmp(ether(3)) != 0 {
			t.Fatalf("payout %d: %s %v", i, p, rel.Amounts[i])
		}
	}
	if st := h.jobState(jobID); st != JobSettled {
		t.Fatalf("state %v", st)
	}

	// Credits are pulled: the processor's balance grows by its payout
	// minus the withdraw's gas.
	for _, i := range []int{1, 2, 3} {
		cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(i))
		if cr.Cmp(ether(3)) != 0 {
			t.Fatalf("credit of %d: %v", i, cr)
		}
	}
	cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(creator))
	if cr.Cmp(ether(1)) != 0 {
		t.Fatalf("creator's change: %v", cr)
	}
	before := h.balance(h.addr(1))
	rcpt, err = h.clients[1].Withdraw(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.expectEvents(rcpt, "Withdrawn")
	fee := new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice)
	want := new(big.Int).Sub(new(big.Int).Add(before, ether(3)), fee)
	if got := h.balance(h.addr(1)); got.Cmp(want) != 0 {
		t.Fatalf("balance after withdraw %v, want %v", got, want)
	}
	_, err = h.clients[1].Withdraw(h.ctx)
	expectRevert(t, err, ErrNothingToWithdraw, "NothingToWithdraw")

	// Settling twice is impossible.
	_, err = h.clients[outsider].Settle(h.ctx, s, sigs)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
}

func TestSettleRefusals(t *testing.T) {
	h := stakedHarness(t)
	jobID, seed := h.createJob(creator, ether(10), time.Hour)
	h.join(jobID, 1, 2, 3)
	d := h.clients[0].Domain()

	// A second escrow on the same chain: its signatures must not work here.
	other, _, err := Deploy(h.ctx, h.backend, h.chain.Transactor(outsider), h.params, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	h.extra = append(h.extra, other.Address())

	good := h.settlement(jobID, seed, ether(3), []int{1, 2, 3}, nil)
	cases := settleRefusals(h, jobID, seed, good, other.Domain())
	before := h.balance(h.addr(creator))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, sigs := tc.build()
			_, err := h.rawSettle(outsider, s, sigs)
			expectRevert(t, err, tc.want, tc.revert)
			if st := h.jobState(jobID); st != JobFunded {
				t.Fatalf("job %v after a refused settle", st)
			}
		})
	}
	// Refusals cost the job nothing: the creator paid no gas and the
	// escrow is intact; a correct settlement still goes through.
	if got := h.balance(h.addr(creator)); got.Cmp(before) != 0 {
		t.Fatalf("creator balance moved: %v -> %v", before, got)
	}
	if _, err := h.clients[outsider].Settle(h.ctx, good, h.sign(d, good, 1, 2, 3)); err != nil {
		t.Fatalf("good settlement after refusals: %v", err)
	}
}

// settleRefusal is a settlement the escrow refuses, with the error and
// the revert it refuses it with.
type settleRefusal struct {
	name   string
	build  func() (Settlement, []SignedBy)
	want   error
	revert string
}

// settleRefusals are variants of good, the settlement of job jobID with
// seed, that the escrow must refuse; otherDomain is another escrow's.
func settleRefusals(h *harness, jobID, seed common.Hash, good Settlement, otherDomain Domain) []settleRefusal {
	d := h.clients[0].Domain()
	return []settleRefusal{
		{"bad seed", func() (Settlement, []SignedBy) {
			s := h.settlement(jobID, common.Hash{1}, ether(3), []int{1, 2, 3}, nil)
			return s, h.sign(d, s, 1, 2, 3)
		}, ErrBadSeed, "BadSeed"},
		{"too few signatures", func() (Settlement, []SignedBy) {
			return good, h.sign(d, good, 1)
		}, ErrQuorumNotReached, "QuorumNotReached"},
		{"duplicate payee", func() (Settlement, []SignedBy) {
			s := good
			p0 := good.Payees[0]
			s.Payees = []common.Address{p0, p0, good.Payees[1]}
			return s, h.sign(d, s, 1, 2, 3)
		}, ErrPayeesNotSorted, "PayeesNotSorted"},
		{"duplicate signer", func() (Settlement, []SignedBy) {
			sigs := h.sign(d, good, 1)
			return good, []SignedBy{sigs[0], sigs[0], sigs[0]}
		}, ErrSignersNotSorted, "SignersNotSorted"},
		{"signers unsorted", func() (Settlement, []SignedBy) {
			sigs := h.sign(d, good, 1, 2, 3)
			sigs[0], sigs[1] = sigs[1], sigs[0]
			return good, sigs
		}, ErrSignersNotSorted, "SignersNotSorted"},
		{"signature in another signer's slot", func() (Settlement, []SignedBy) {
			sigs := h.sign(d, good, 1, 2, 3)
			sigs[0].Signature, sigs[1].Signature = sigs[1].Signature, sigs[0].Signature
			return good, sigs
		}, ErrSignatureRejected, "BadSignature"},
		{"empty signature", func() (Settlement, []SignedBy) {
			sigs := h.sign(d, good, 1, 2, 3)
			sigs[2].Signature = nil
			return good, sigs
		}, ErrSignatureRejected, "BadSignature"},
		{"unstaked signer, not a member", func() (Settlement, []SignedBy) {
			return good, h.sign(d, good, 1, 2, unstaked)
		}, ErrNotMember, "NotMember"},
		{"payee not a member", func() (Settlement, []SignedBy) {
			s := h.settlement(jobID, seed, ether(2), []int{1, 2, outsider}, nil)
			return s, h.sign(d, s, 1, 2, 3)
		}, ErrNotMember, "NotMember"},
		{"over-payment", func() (Settlement, []SignedBy) {
			s := h.settlement(jobID, seed, ether(4), []int{1, 2, 3}, nil)
			return s, h.sign(d, s, 1, 2, 3)
		}, ErrOverPayment, "OverPayment"},
		{"signature from another contract", func() (Settlement, []SignedBy) {
			return good, h.sign(otherDomain, good, 1, 2, 3)
		}, ErrSignatureRejected, "BadSignature"},
		{"signature from another chain ID", func() (Settlement, []SignedBy) {
			return good, h.sign(Domain{ChainID: big.NewInt(1), Contract: d.Contract}, good, 1, 2, 3)
		}, ErrSignatureRejected, "BadSignature"},
		{"culprit paid", func() (Settlement, []SignedBy) {
			s := h.settlement(jobID, seed, ether(3), []int{1, 2, 3}, nil)
			s.Culprits = []common.Address{h.addr(2)}
			return s, h.sign(d, s, 1, 2, 3)
		}, ErrCulpritIsPayee, "CulpritIsPayee"},
		{"signature malleated to high s", func() (Settlement, []SignedBy) {
			sigs := h.sign(d, good, 1, 2, 3)
			for _, sb := range sigs {
				sig := sb.Signature
				sv := new(big.Int).SetBytes(sig[32:64])
				sv.Sub(crypto.S256().Params().N, sv)
				sv.FillBytes(sig[32:64])
				sig[64] ^= 1 // 27 <-> 28
			}
			return good, sigs
		}, ErrSignatureRejected, "BadSignature"},
	}
}

func TestClientRejectsInvalidSettlementLocally(t *testing.T) {
	h := stakedHarness(t)
	jobID, seed := h.createJob(creator, ether(1), time.Hour)
	h.join(jobID, 1, 2, 3)
	d := h.clients[1].Domain()
	s := h.settlement(jobID, seed, milli(1), []int{1, 2, 3}, nil)
	sigs := h.sign(d, s, 1, 2, 3)
	s.Payees[0], s.Payees[1] = s.Payees[1], s.Payees[0]
	if _, err := h.clients[1].Settle(h.ctx, s, sigs); !errors.Is(err, ErrBadSettlement) {
		t.Fatalf("unsorted payees: %v", err)
	}
	s = h.settlement(jobID, seed, milli(1), []int{1, 2, 3}, nil)
	if _, err := h.clients[1].Settle(h.ctx, s, nil); !errors.Is(err, ErrBadSettlement) {
		t.Fatalf("no signatures: %v", err)
	}
	if _, err := h.clients[1].Settle(h.ctx, s, []SignedBy{sigs[0], sigs[1], sigs[0]}); !errors.Is(err, ErrBadSettlement) {
		t.Fatalf("a signer twice: %v", err)
	}
	forged := []SignedBy{sigs[0], {Signer: sigs[1].Signer, Signature: sigs[2].Signature}}
	if _, err := h.clients[1].Settle(h.ctx, s, forged); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("signature under another signer: %v", err)
	}
	wrongDomain := h.sign(Domain{ChainID: big.NewInt(1), Contract: d.Contract}, s, 1, 2, 3)
	if _, err := h.clients[1].Settle(h.ctx, s, wrongDomain); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("signatures for another chain: %v", err)
	}
	// Nothing was sent: the sender's nonce has not moved since the joins.
	if n, err := h.chain.sim.Client().NonceAt(h.ctx, h.addr(1), nil); err != nil || n != 2 {
		t.Fatalf("nonce %d (%v): a refused settlement was sent", n, err)
	}
	// Signatures given in any order are sorted by signer.
	reversed := slices.Clone(sigs)
	slices.Reverse(reversed)
	if _, err := h.clients[1].Settle(h.ctx, s, reversed); err != nil {
		t.Fatalf("signatures out of order: %v", err)
	}
}

func TestRefundOnlyAfterDeadline(t *testing.T) {
	h := stakedHarness(t)
	jobID, seed := h.createJob(creator, ether(5), time.Hour)

	_, err := h.clients[outsider].Refund(h.ctx, jobID)
	expectRevert(t, err, ErrDeadlineNotReached, "DeadlineNotReached")

	if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	s := h.settlement(jobID, seed, ether(1), []int{1, 2, 3}, nil)
	sigs := h.sign(h.clients[0].Domain(), s, 1, 2, 3)
	_, err = h.clients[1].Settle(h.ctx, s, sigs)
	expectRevert(t, err, ErrJobExpired, "JobExpired")
	_, err = h.clients[1].Join(h.ctx, jobID)
	expectRevert(t, err, ErrJoinClosed, "JoinClosed")

	// Anyone may trigger the refund; the money goes to the creator.
	rcpt, err := h.clients[outsider].Refund(h.ctx, jobID)
	if err != nil {
		t.Fatalf("refund: %v", err)
	}
	h.expectEvents(rcpt, "Refunded")
	if cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(creator)); cr.Cmp(ether(5)) != 0 {
		t.Fatalf("creator credit %v", cr)
	}
	if cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(outsider)); cr.Sign() != 0 {
		t.Fatalf("outsider credit %v", cr)
	}
	j, _ := h.clients[0].Job(h.ctx, jobID)
	if j.State != JobRefunded || j.ClosedAtBlock != rcpt.BlockNumber.Uint64() {
		t.Fatalf("job after refund %+v", j)
	}
	_, err = h.clients[1].Settle(h.ctx, s, sigs)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
	_, err = h.clients[outsider].Refund(h.ctx, jobID)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
	if _, err := h.clients[creator].WaitReleased(h.ctx, jobID); !errors.Is(err, ErrNotReleased) {
		t.Fatalf("wait on refunded job: %v", err)
	}
	if _, err := h.clients[creator].Withdraw(h.ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSettleBeforeRefundWinsAtDeadline(t *testing.T) {
	h := stakedHarness(t)
	jobID, seed := h.createJob(creator, ether(5), time.Hour)
	h.join(jobID, 1, 2, 3)
	s := h.settlement(jobID, seed, ether(1), []int{1, 2, 3}, nil)
	if _, err := h.clients[2].Settle(h.ctx, s, h.sign(h.clients[0].Domain(), s, 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := h.clients[creator].Refund(h.ctx, jobID)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
}

func TestAbortByCreatorOnly(t *testing.T) {
	h := stakedHarness(t)
	jobID, seed := h.createJob(creator, ether(4), time.Hour)

	_, err := h.clients[outsider].Abort(h.ctx, jobID)
	expectRevert(t, err, ErrNotCreator, "NotCreator")

	rcpt, err := h.clients[creator].Abort(h.ctx, jobID)
	if err != nil {
		t.Fatalf("abort: %v", err)
	}
	h.expectEvents(rcpt, "JobAborted")
	if st := h.jobState(jobID); st != JobAborted {
		t.Fatalf("state %v", st)
	}
	if cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(creator)); cr.Cmp(ether(4)) != 0 {
		t.Fatalf("creator credit %v", cr)
	}
	s := h.settlement(jobID, seed, ether(1), []int{1, 2, 3}, nil)
	_, err = h.clients[1].Settle(h.ctx, s, h.sign(h.clients[0].Domain(), s, 1, 2, 3))
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
	_, err = h.clients[creator].Abort(h.ctx, jobID)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
	if _, err := h.clients[creator].WaitReleased(h.ctx, jobID); !errors.Is(err, ErrNotReleased) {
		t.Fatalf("wait on aborted job: %v", err)
	}
}

func TestCreateJobRefusals(t *testing.T) {
	h := newHarness(t, 2)
	jobID := common.Hash{8}
	h.createJobID(creator, jobID, common.Hash{1}, ether(1), time.Hour, looseTerms)
	now := h.headTime()
	c := h.clients[creator]

	_, err := c.CreateJob(h.ctx, jobID, common.Hash{1}, now.Add(time.Hour), looseTerms, ether(1))
	expectRevert(t, err, ErrJobExists, "JobExists")
	_, err = c.CreateJob(h.ctx, common.Hash{9}, common.Hash{1}, now.Add(time.Hour), looseTerms, big.NewInt(0))
	expectRevert(t, err, ErrBadAmount, "BadAmount")
	_, err = c.CreateJob(h.ctx, common.Hash{9}, common.Hash{1}, now.Add(-time.Minute), looseTerms, ether(1))
	expectRevert(t, err, ErrBadDeadline, "BadDeadline")
	_, err = c.CreateJob(h.ctx, common.Hash{9}, common.Hash{}, now.Add(time.Hour), looseTerms, ether(1))
	expectRevert(t, err, ErrBadCommitment, "BadCommitment")
	// The deadline must leave the quiet period, or no join could ever be
	// followed by a settle.
	_, err = c.CreateJob(h.ctx, common.Hash{9}, common.Hash{1}, now.Add(time.Hour), Terms{Quiet: 2 * time.Hour, MinSigners: 1}, ether(1))
	expectRevert(t, err, ErrBadDeadline, "BadDeadline")

	// Terms the contract refuses are refused locally too; the contract
	// refuses them on its own.
	for _, bad := range []Terms{{Quiet: time.Minute}, {Quiet: -time.Second, MinSigners: 1}, {Quiet: MaxQuiet + time.Second, MinSigners: 1}} {
		if _, err := c.CreateJob(h.ctx, common.Hash{9}, common.Hash{1}, now.Add(time.Hour), bad, ether(1)); !errors.Is(err, ErrBadTerms) {
			t.Fatalf("terms %+v: %v", bad, err)
		}
	}
	data := c.bindings.PackCreateJob(common.Hash{9}, common.Hash{1}, uint64(now.Add(time.Hour).Unix()), 60, 0)
	_, err = c.send(h.ctx, "createJob", ether(1), data, false)
	expectRevert(t, err, ErrBadMinSigners, "BadMinSigners")
	// A quiet period is never shorter than asked: it rounds up to whole
	// seconds.
	key := h.createJobID(creator, common.Hash{10}, common.Hash{1}, ether(1), time.Hour, Terms{Quiet: 1500 * time.Millisecond, MinSigners: 3})
	j, err := c.Job(h.ctx, key)
	if err != nil || j.Terms != (Terms{Quiet: 2 * time.Second, MinSigners: 3}) {
		t.Fatalf("terms on chain %+v (%v)", j.Terms, err)
	}
}

func TestStakeLifecycle(t *testing.T) {
	h := newHarness(t, 3)
	p := 1
	h.stake(p, ether(3))
	st, err := h.clients[0].StakeOf(h.ctx, h.addr(p))
	if err != nil {
		t.Fatal(err)
	}
	if st.Active.Cmp(ether(3)) != 0 || st.Pending.Sign() != 0 {
		t.Fatalf("stake %+v", st)
	}

	_, err = h.clients[p].RequestUnstake(h.ctx, ether(4))
	expectRevert(t, err, ErrInsufficientStake, "InsufficientStake")
	rcpt, err := h.clients[p].RequestUnstake(h.ctx, ether(2))
	if err != nil {
		t.Fatal(err)
	}
	h.expectEvents(rcpt, "UnstakeRequested")
	st, _ = h.clients[0].StakeOf(h.ctx, h.addr(p))
	if st.Active.Cmp(ether(1)) != 0 || st.Pending.Cmp(ether(2)) != 0 || !st.UnlockAt.Equal(h.headTime().Add(time.Hour)) {
		t.Fatalf("stake after request %+v (head %v)", st, h.headTime())
	}

	_, err = h.clients[p].WithdrawStake(h.ctx)
	expectRevert(t, err, ErrStakeLocked, "StakeLocked")
	if err := h.chain.AdvanceTime(time.Hour); err != nil {
		t.Fatal(err)
	}
	before := h.balance(h.addr(p))
	rcpt, err = h.clients[p].WithdrawStake(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.expectEvents(rcpt, "StakeWithdrawn")
	fee := new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice)
	if got, want := h.balance(h.addr(p)), new(big.Int).Sub(new(big.Int).Add(before, ether(2)), fee); got.Cmp(want) != 0 {
		t.Fatalf("balance %v, want %v", got, want)
	}
	_, err = h.clients[p].WithdrawStake(h.ctx)
	expectRevert(t, err, ErrNothingToWithdraw, "NothingToWithdraw")

	// Stake cooling down no longer counts for joining or signing.
	h.stake(2, ether(1))
	jobID, seed := h.createJob(creator, ether(1), time.Hour)
	h.join(jobID, p, 2)
	if _, err := h.clients[p].RequestUnstake(h.ctx, ether(1)); err != nil {
		t.Fatal(err)
	}
	other, _ := h.createJob(creator, ether(1), time.Hour)
	_, err = h.clients[p].Join(h.ctx, other)
	expectRevert(t, err, ErrNotStaked, "NotStaked")
	s := h.settlement(jobID, seed, milli(100), []int{1, 2}, nil)
	_, err = h.clients[2].Settle(h.ctx, s, h.sign(h.clients[0].Domain(), s, 1, 2))
	expectRevert(t, err, ErrSignerNotStaked, "SignerNotStaked")
}

func TestSlashCulprit(t *testing.T) {
	h := stakedHarness(t)
	culprit := 3
	// Part of the culprit's stake is cooling down: it is slashed too.
	if _, err := h.clients[culprit].RequestUnstake(h.ctx, ether(1)); err != nil {
		t.Fatal(err)
	}
	jobID, seed := h.createJob(creator, ether(6), time.Hour)
	h.join(jobID, 1, 2, culprit)
	s := h.settlement(jobID, seed, ether(2), []int{1, 2}, []int{culprit})
	rcpt, err := h.clients[1].Settle(h.ctx, s, h.sign(h.clients[0].Domain(), s, 1, 2))
	if err != nil {
		t.Fatalf("settle: %v", err)
	}
	h.expectEvents(rcpt, "Slashed", "EscrowReleased")
	ev, err := h.clients[0].bindings.UnpackSlashedEvent(rcpt.Logs[0])
	if err != nil {
		t.Fatal(err)
	}
	if ev.Culprit != h.addr(culprit) || ev.Amount.Cmp(ether(2)) != 0 || ev.Key != jobID {
		t.Fatalf("slashed event %+v", ev)
	}
	st, _ := h.clients[0].StakeOf(h.ctx, h.addr(culprit))
	if st.Active.Sign() != 0 || st.Pending.Sign() != 0 {
		t.Fatalf("culprit keeps stake %+v", st)
	}
	if burned, _ := h.clients[0].TotalBurned(h.ctx); burned.Cmp(ether(2)) != 0 {
		t.Fatalf("burned %v", burned)
	}
	if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = h.clients[culprit].WithdrawStake(h.ctx)
	expectRevert(t, err, ErrNothingToWithdraw, "NothingToWithdraw")
	if cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(creator)); cr.Cmp(ether(2)) != 0 {
		t.Fatalf("creator change %v", cr)
	}
}

func TestReentrantWithdrawIsRefused(t *testing.T) {
	h := newHarness(t, 3)
	attackerABI := NewReentrantWithdrawer()
	c := h.clients[1]
	deployData := append(common.FromHex(ReentrantWithdrawerMetaData.Bin), attackerABI.PackConstructor(c.Address())...)
	rcpt, err := c.sendVia(h.ctx, c.contract, "deployAttacker", nil, deployData, true)
	if err != nil {
		t.Fatal(err)
	}
	attacker := rcpt.ContractAddress
	h.extra = append(h.extra, attacker)
	bc := bind.NewBoundContract(attacker, attackerABI.GetABI(), h.backend, h.backend, h.backend)
	read := func(data []byte) []byte {
		out, err := h.backend.CallContract(h.ctx, ethCall(attacker, data), nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	reentrantSel := crypto.Keccak256([]byte("Reentrant()"))[:4]

	// Pull payments: the attacker earns a credit by aborting its own job.
	deadline := uint64(h.headTime().Add(time.Hour).Unix())
	jobID := common.Hash{0xa7}
	h.jobs = append(h.jobs, JobKey(attacker, jobID))
	if _, err := c.sendVia(h.ctx, bc, "createAndAbort", ether(1), attackerABI.PackCreateAndAbort(jobID, common.Hash{1}, deadline), false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.sendVia(h.ctx, bc, "attackWithdraw", nil, attackerABI.PackAttackWithdraw(), false); err != nil {
		t.Fatalf("attack: %v", err)
	}
	attempts, _ := attackerABI.UnpackAttempts(read(attackerABI.PackAttempts()))
	reentries, _ := attackerABI.UnpackReentries(read(attackerABI.PackReentries()))
	last, _ := attackerABI.UnpackLastRevert(read(attackerABI.PackLastRevert()))
	if attempts.Int64() != 1 || reentries.Sign() != 0 || !bytes.Equal(last, reentrantSel) {
		t.Fatalf("withdraw reentry: attempts %v reentries %v revert %x", attempts, reentries, last)
	}
	if got := h.balance(attacker); got.Cmp(ether(1)) != 0 {
		t.Fatalf("attacker holds %v, want exactly its credit", got)
	}

	// Same on withdrawStake.
	if _, err := c.sendVia(h.ctx, bc, "stakeAndRequest", ether(2), attackerABI.PackStakeAndRequest(), false); err != nil {
		t.Fatal(err)
	}
	if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := c.sendVia(h.ctx, bc, "attackWithdrawStake", nil, attackerABI.PackAttackWithdrawStake(), false); err != nil {
		t.Fatalf("attack stake: %v", err)
	}
	attempts, _ = attackerABI.UnpackAttempts(read(attackerABI.PackAttempts()))
	reentries, _ = attackerABI.UnpackReentries(read(attackerABI.PackReentries()))
	last, _ = attackerABI.UnpackLastRevert(read(attackerABI.PackLastRevert()))
	if attempts.Int64() != 2 || reentries.Sign() != 0 || !bytes.Equal(last, reentrantSel) {
		t.Fatalf("withdrawStake reentry: attempts %v reentries %v revert %x", attempts, reentries, last)
	}
	if got := h.balance(attacker); got.Cmp(ether(3)) != 0 {
		t.Fatalf("attacker holds %v, want 3 ether", got)
	}
}

func TestDigestMatchesContract(t *testing.T) {
	h := stakedHarness(t)
	s := h.settlement(common.Hash{1}, common.Hash{2}, milli(5), []int{1, 2, 3}, []int{outsider})
	want, err := h.clients[0].ContractDigest(h.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Digest(h.clients[0].Domain()); got != want {
		t.Fatalf("digest %x, contract %x", got, want)
	}
	sep, err := call(h.ctx, h.clients[0], h.clients[0].bindings.PackDomainSeparator(), h.clients[0].bindings.UnpackDomainSeparator)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(sep) != h.clients[0].Domain().Separator() {
		t.Fatalf("domain separator %x, contract %x", h.clients[0].Domain().Separator(), sep)
	}
	typeHash, err := call(h.ctx, h.clients[0], h.clients[0].bindings.PackSETTLEMENTTYPEHASH(), h.clients[0].bindings.UnpackSETTLEMENTTYPEHASH)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(typeHash) != settlementTypeHash {
		t.Fatalf("type hash differs")
	}
	creatorAddr, jobID := h.addr(creator), common.Hash{0x1d}
	key, err := call(h.ctx, h.clients[0], h.clients[0].bindings.PackJobKey(creatorAddr, jobID), h.clients[0].bindings.UnpackJobKey)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(key) != JobKey(creatorAddr, jobID) {
		t.Fatalf("job key %x, contract %x", JobKey(creatorAddr, jobID), key)
	}
}
