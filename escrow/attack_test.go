package escrow

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// The attacks of a lone staked account (and of a squatter) on the escrow:
// each must revert and leave the honest parties' money where it was.

// attacker is a staked account that is none of the honest processors.
const attacker = outsider

// strictTerms are terms a creator would pick against a lone staker: a
// quiet period after the last join, and two signers at least.
var strictTerms = Terms{Quiet: 10 * time.Minute, MinSigners: 2}

// attackHarness is stakedHarness with the attacker staked too.
func attackHarness(t *testing.T) *harness {
	h := stakedHarness(t)
	h.stake(attacker, ether(2))
	return h
}

// expectStake checks that account i still holds its whole stake.
func (h *harness) expectStake(i int, want *big.Int) {
	h.t.Helper()
	st, err := h.clients[0].StakeOf(h.ctx, h.addr(i))
	if err != nil {
		h.t.Fatal(err)
	}
	if total := new(big.Int).Add(st.Active, st.Pending); total.Cmp(want) != 0 {
		h.t.Fatalf("stake of %d is %v, want %v", i, total, want)
	}
}

func (h *harness) expectCredit(i int, want *big.Int) {
	h.t.Helper()
	cr, err := h.clients[0].CreditOf(h.ctx, h.addr(i))
	if err != nil {
		h.t.Fatal(err)
	}
	if cr.Cmp(want) != 0 {
		h.t.Fatalf("credit of %d is %v, want %v", i, cr, want)
	}
}

// TestLoneStakerCannotTakeAnotherCreatorsJob: the attack of issue 19. A
// lone staker joins another creator's job first and settles it to itself,
// naming the honest stakers as culprits. It is too early while honest
// processors can still join; once two honest members exist and do not
// sign, its lone signature is no quorum; on a job nobody else joined, it
// is below the creator's minimum of signers. The honest settlement then
// goes through.
func TestLoneStakerCannotTakeAnotherCreatorsJob(t *testing.T) {
	h := attackHarness(t)
	key, seed := h.createJobWith(creator, ether(10), time.Hour, strictTerms)
	d := h.clients[0].Domain()

	h.join(key, attacker)
	joinedAt := h.headTime()
	if j, err := h.clients[0].Job(h.ctx, key); err != nil || !j.SettleOpensAt().Equal(joinedAt.Add(strictTerms.Quiet)) {
		t.Fatalf("job %+v (%v): settle should open a quiet period after the join", j, err)
	}
	theft := h.settlement(key, seed, ether(10), []int{attacker}, []int{1, 2})
	_, err := h.rawSettle(attacker, theft, h.sign(d, theft, attacker))
	expectRevert(t, err, ErrTooEarly, "TooEarly")
	if opens := revertArg(t, err, 1).(*big.Int); opens.Int64() != joinedAt.Add(strictTerms.Quiet).Unix() {
		t.Fatalf("TooEarly opens at %v, want %v", opens, joinedAt.Add(strictTerms.Quiet).Unix())
	}

	// Honest processors join as they start work; each join restarts the
	// quiet period.
	h.join(key, 1, 2)
	if err := h.chain.AdvanceTime(strictTerms.Quiet); err != nil {
		t.Fatal(err)
	}
	theft = h.settlement(key, seed, ether(10), []int{attacker}, []int{1, 2})
	_, err = h.rawSettle(attacker, theft, h.sign(d, theft, attacker))
	expectRevert(t, err, ErrQuorumNotReached, "QuorumNotReached")
	quiet := h.settlement(key, seed, ether(10), []int{attacker}, nil)
	_, err = h.rawSettle(attacker, quiet, h.sign(d, quiet, attacker))
	expectRevert(t, err, ErrQuorumNotReached, "QuorumNotReached")

	// On a job no honest processor joined, the attacker is the whole
	// membership, and the creator's minimum of signers stops it.
	lonely, lonelySeed := h.createJobWith(creator, ether(3), time.Hour, strictTerms)
	h.join(lonely, attacker)
	if err := h.chain.AdvanceTime(strictTerms.Quiet); err != nil {
		t.Fatal(err)
	}
	alone := h.settlement(lonely, lonelySeed, ether(3), []int{attacker}, nil)
	_, err = h.rawSettle(attacker, alone, h.sign(d, alone, attacker))
	expectRevert(t, err, ErrTooFewSigners, "TooFewSigners")

	for _, i := range []int{1, 2, 3} {
		h.expectStake(i, ether(2))
	}
	h.expectCredit(attacker, new(big.Int))

	// The honest members settle: 2 of 3 members, the attacker unpaid.
	honest := h.settlement(key, seed, ether(4), []int{1, 2}, nil)
	if _, err := h.clients[1].Settle(h.ctx, honest, h.sign(d, honest, 1, 2)); err != nil {
		t.Fatalf("honest settlement: %v", err)
	}
	h.expectCredit(1, ether(4))
	h.expectCredit(2, ether(4))
	h.expectCredit(creator, ether(2))
	h.expectCredit(attacker, new(big.Int))
	h.expectStake(attacker, ether(2))
}

// TestCulpritsWithoutQuorumRevert: a member cannot burn other members'
// stakes on its own signature.
func TestCulpritsWithoutQuorumRevert(t *testing.T) {
	h := attackHarness(t)
	key, seed := h.createJob(creator, ether(6), time.Hour)
	h.join(key, 1, 2, 3)
	d := h.clients[0].Domain()
	s := h.settlement(key, seed, ether(6), []int{3}, []int{1, 2})
	_, err := h.rawSettle(3, s, h.sign(d, s, 3))
	expectRevert(t, err, ErrQuorumNotReached, "QuorumNotReached")
	for _, i := range []int{1, 2, 3} {
		h.expectStake(i, ether(2))
	}
	if burned, _ := h.clients[0].TotalBurned(h.ctx); burned.Sign() != 0 {
		t.Fatalf("burned %v", burned)
	}
}

// TestSlashOfNonMemberReverts: even a quorum of a job's members cannot
// name as culprit an account that never joined the job.
func TestSlashOfNonMemberReverts(t *testing.T) {
	h := attackHarness(t)
	key, seed := h.createJob(creator, ether(6), time.Hour)
	h.join(key, 1, 2, 3)
	d := h.clients[0].Domain()
	s := h.settlement(key, seed, ether(2), []int{1, 2, 3}, []int{attacker})
	_, err := h.rawSettle(1, s, h.sign(d, s, 1, 2, 3))
	expectRevert(t, err, ErrNotMember, "NotMember")
	if who := revertArg(t, err, 1).(common.Address); who != h.addr(attacker) {
		t.Fatalf("NotMember names %s, want the culprit %s", who, h.addr(attacker))
	}
	h.expectStake(attacker, ether(2))
}

// TestSettleByNonMemberReverts: a staked account's signature counts only on
// the jobs it joined, even alongside members' signatures.
func TestSettleByNonMemberReverts(t *testing.T) {
	h := attackHarness(t)
	key, seed := h.createJob(creator, ether(6), time.Hour)
	h.join(key, 1, 2, 3)
	d := h.clients[0].Domain()
	s := h.settlement(key, seed, ether(2), []int{1, 2}, nil)
	_, err := h.rawSettle(attacker, s, h.sign(d, s, 1, attacker))
	expectRevert(t, err, ErrNotMember, "NotMember")
	// Paying itself as a non-member fails too, whoever signs.
	s = h.settlement(key, seed, ether(2), []int{1, 2, attacker}, nil)
	_, err = h.rawSettle(attacker, s, h.sign(d, s, 1, 2, 3))
	expectRevert(t, err, ErrNotMember, "NotMember")
	if st := h.jobState(key); st != JobFunded {
		t.Fatalf("job %v", st)
	}
}

// TestAbortOnlyBeforeWork: the creator takes its escrow back only while no
// processor has joined; after a join the job ends by settle or refund.
func TestAbortOnlyBeforeWork(t *testing.T) {
	h := attackHarness(t)
	key, _ := h.createJob(creator, ether(4), time.Hour)
	_, err := h.clients[attacker].Abort(h.ctx, key)
	expectRevert(t, err, ErrNotCreator, "NotCreator")
	h.join(key, 1)
	_, err = h.clients[creator].Abort(h.ctx, key)
	expectRevert(t, err, ErrWorkStarted, "WorkStarted")
	if n := revertArg(t, err, 1).(*big.Int); n.Int64() != 1 {
		t.Fatalf("WorkStarted with %v members, want 1", n)
	}
	if st := h.jobState(key); st != JobFunded {
		t.Fatalf("job %v after a refused abort", st)
	}
	// Past the deadline the creator gets the escrow back by refund.
	if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := h.clients[attacker].Refund(h.ctx, key); err != nil {
		t.Fatal(err)
	}
	h.expectCredit(creator, ether(4))
}

// TestJobIDCannotBeSquatted: an attacker creates a job under the real
// creator's job ID first. The real creator's createJob still succeeds,
// under another key, and the squatter can neither abort nor settle it.
func TestJobIDCannotBeSquatted(t *testing.T) {
	h := attackHarness(t)
	jobID := common.Hash{0x5a}
	seed := common.Hash{0x5e}
	squat := h.createJobID(attacker, jobID, SeedCommitment(seed), big.NewInt(1), time.Hour, looseTerms)
	real := h.createJobID(creator, jobID, SeedCommitment(seed), ether(5), time.Hour, looseTerms)
	if squat == real || real != JobKey(h.addr(creator), jobID) || squat != JobKey(h.addr(attacker), jobID) {
		t.Fatalf("keys: squatter %s, creator %s", squat, real)
	}
	j, err := h.clients[0].Job(h.ctx, real)
	if err != nil || j.Creator != h.addr(creator) || j.Amount.Cmp(ether(5)) != 0 {
		t.Fatalf("the real job %+v (%v)", j, err)
	}
	_, err = h.clients[attacker].Abort(h.ctx, real)
	expectRevert(t, err, ErrNotCreator, "NotCreator")
	s := h.settlement(real, seed, ether(5), []int{attacker}, nil)
	_, err = h.rawSettle(attacker, s, h.sign(h.clients[0].Domain(), s, attacker))
	expectRevert(t, err, ErrNoMembers, "NoMembers")
	h.join(real, 1)
	_, err = h.rawSettle(attacker, s, h.sign(h.clients[0].Domain(), s, attacker))
	expectRevert(t, err, ErrNotMember, "NotMember")
	// Aborting its own squat touches only the squatter's wei.
	if _, err := h.clients[attacker].Abort(h.ctx, squat); err != nil {
		t.Fatal(err)
	}
	if st := h.jobState(real); st != JobFunded {
		t.Fatalf("real job %v", st)
	}
	h.expectCredit(attacker, big.NewInt(1))
}

// TestJoinRules: who may join a job, and when.
func TestJoinRules(t *testing.T) {
	h := attackHarness(t)
	key, _ := h.createJobWith(creator, ether(1), time.Hour, Terms{Quiet: 10 * time.Minute, MinSigners: 1})

	_, err := h.clients[unstaked].Join(h.ctx, key)
	expectRevert(t, err, ErrNotStaked, "NotStaked")
	h.stake(unstaked, milli(500)) // half the minimum
	_, err = h.clients[unstaked].Join(h.ctx, key)
	expectRevert(t, err, ErrNotStaked, "NotStaked")

	h.join(key, 1)
	_, err = h.clients[1].Join(h.ctx, key)
	expectRevert(t, err, ErrAlreadyMember, "AlreadyMember")

	_, err = h.clients[1].Join(h.ctx, common.Hash{0xde, 0xad})
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
	aborted, _ := h.createJob(creator, ether(1), time.Hour)
	if _, err := h.clients[creator].Abort(h.ctx, aborted); err != nil {
		t.Fatal(err)
	}
	_, err = h.clients[1].Join(h.ctx, aborted)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")

	// Joins close a quiet period before the deadline, so that no join
	// pushes the settlement past it.
	if j, err := h.clients[0].Job(h.ctx, key); err != nil || !j.JoinClosesAt().Equal(j.Deadline.Add(-10*time.Minute)) {
		t.Fatalf("job %+v (%v): joins should close 10 minutes before the deadline", j, err)
	}
	if err := h.chain.AdvanceTime(51 * time.Minute); err != nil {
		t.Fatal(err)
	}
	_, err = h.clients[2].Join(h.ctx, key)
	expectRevert(t, err, ErrJoinClosed, "JoinClosed")
	if err := h.chain.AdvanceTime(time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = h.clients[2].Join(h.ctx, key)
	expectRevert(t, err, ErrJoinClosed, "JoinClosed")
	if j, err := h.clients[0].Job(h.ctx, key); err != nil || j.Members != 1 {
		t.Fatalf("job %+v (%v)", j, err)
	}
}

// TestJoinMemberLimit: a job takes MaxMembers members and no more, so that
// its member count fits its byte and settle's gas stays bounded.
func TestJoinMemberLimit(t *testing.T) {
	h := newHarness(t, MaxMembers+2)
	key, _ := h.createJob(creator, ether(1), time.Hour)
	for i := 1; i <= MaxMembers+1; i++ {
		h.stake(i, ether(1))
	}
	for i := 1; i <= MaxMembers; i++ {
		h.join(key, i)
	}
	_, err := h.clients[MaxMembers+1].Join(h.ctx, key)
	expectRevert(t, err, ErrTooManyMembers, "TooManyMembers")
	if j, err := h.clients[0].Job(h.ctx, key); err != nil || j.Members != MaxMembers {
		t.Fatalf("job %+v (%v)", j, err)
	}
	max, err := call(h.ctx, h.clients[0], h.clients[0].bindings.PackMAXMEMBERS(), h.clients[0].bindings.UnpackMAXMEMBERS)
	if err != nil || max.Int64() != MaxMembers {
		t.Fatalf("MAX_MEMBERS %v (%v), Go says %d", max, err, MaxMembers)
	}
}
