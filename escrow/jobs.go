package escrow

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// MaxQuiet is the longest quiet period the contract takes (uint32 seconds).
const MaxQuiet = math.MaxUint32 * time.Second

// Terms are a creator's terms for settling its job, fixed at createJob.
type Terms struct {
	// Quiet is how long after the last join the job may first be
	// settled; each join restarts it. Honest processors join as they
	// start work, so a lone account that joins first cannot settle before
	// they are members. Whole seconds, rounded up; at most MaxQuiet.
	// Default 1 minute.
	Quiet time.Duration
	// MinSigners is the fewest member signatures a settlement needs,
	// whatever share of the members they are, so that a lone member of a
	// job no one else joined cannot settle it. At least 1. Default 2.
	MinSigners uint8
}

// DefaultTerms returns the defaults.
func DefaultTerms() Terms {
	return Terms{Quiet: time.Minute, MinSigners: 2}
}

// Validate checks the terms against the contract's rules.
func (t Terms) Validate() error {
	switch {
	case t.MinSigners < 1:
		return fmt.Errorf("%w: minimum signers %d, at least 1", ErrBadTerms, t.MinSigners)
	case t.Quiet < 0 || t.Quiet > MaxQuiet:
		return fmt.Errorf("%w: quiet period %v outside 0..%v", ErrBadTerms, t.Quiet, MaxQuiet)
	}
	return nil
}

// quietSeconds is Quiet in whole seconds, rounded up: a quiet period is
// never shorter than asked.
func (t Terms) quietSeconds() uint32 {
	return uint32((t.Quiet + time.Second - 1) / time.Second)
}

// Job is a job's record on chain.
type Job struct {
	Creator  common.Address
	Amount   *big.Int
	Deadline time.Time
	State    JobState
	// ClosedAtBlock is the block that settled, refunded or aborted the
	// job; 0 while it is funded.
	ClosedAtBlock uint64
	// Members is how many processors have joined the job.
	Members int
	// LastJoin is when the last processor joined; the zero time until
	// one has.
	LastJoin time.Time
	// Terms are the creator's terms.
	Terms Terms
}

// SettleOpensAt is the earliest block time at which the job may be
// settled as its members stand: the quiet period after the last join.
func (j Job) SettleOpensAt() time.Time {
	if j.LastJoin.IsZero() {
		return time.Unix(0, 0).Add(j.Terms.Quiet)
	}
	return j.LastJoin.Add(j.Terms.Quiet)
}

// JoinClosesAt is the last block time at which a processor may join: a
// join always leaves the quiet period before the deadline.
func (j Job) JoinClosesAt() time.Time { return j.Deadline.Add(-j.Terms.Quiet) }

// Now reads the time of the chain's latest block: the block.timestamp a
// call (and a transaction's gas estimate) sees, and less than that of the
// block a transaction sent now lands in. Time-bound rules (the quiet
// period, the deadline) are the chain's clock, not the caller's.
func (c *Client) Now(ctx context.Context) (time.Time, error) {
	h, err := retryValue(ctx, c, func() (*types.Header, error) { return c.backend.HeaderByNumber(ctx, nil) })
	c.metrics.read("header", err)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(int64(h.Time), 0), nil
}

// Release is a settled job's payout, as the EscrowReleased event tells it.
type Release struct {
	Key          common.Hash // the job's key, JobKey(creator, job ID)
	ResultRoot   common.Hash
	VerifierHash common.Hash
	Payees       []common.Address
	Amounts      []*big.Int
	Refund       *big.Int // credited back to the creator
	Block        uint64
	TxHash       common.Hash
}

// SignedBy is one member's signature over a settlement.
type SignedBy struct {
	Signer    common.Address
	Signature []byte // 65 bytes r‖s‖v, as SignSettlement makes it
}

// KeyOf is the key of this client's own job jobID: the key CreateJob
// creates it under.
func (c *Client) KeyOf(jobID common.Hash) common.Hash { return JobKey(c.From(), jobID) }

// CreateJob locks price in escrow for the signer's job jobID, under
// KeyOf(jobID). seedCommitment is SeedCommitment(seed); after deadline the
// job can only be refunded. The deadline must leave the quiet period.
func (c *Client) CreateJob(ctx context.Context, jobID, seedCommitment common.Hash, deadline time.Time, terms Terms, price *big.Int) (*types.Receipt, error) {
	if deadline.Unix() <= 0 {
		return nil, fmt.Errorf("%w: deadline %v", ErrBadDeadline, deadline)
	}
	if err := terms.Validate(); err != nil {
		return nil, err
	}
	data := c.bindings.PackCreateJob(jobID, seedCommitment, uint64(deadline.Unix()), terms.quietSeconds(), terms.MinSigners)
	return c.send(ctx, "createJob", price, data, false)
}

// Join enrolls the signer as a member of job key; a processor joins before
// it works on the job. It needs the minimum active stake.
func (c *Client) Join(ctx context.Context, key common.Hash) (*types.Receipt, error) {
	return c.send(ctx, "join", nil, c.bindings.PackJoin(key), false)
}

// IsMember reads whether account has joined job key.
func (c *Client) IsMember(ctx context.Context, key common.Hash, account common.Address) (bool, error) {
	return call(ctx, c, c.bindings.PackIsMember(key, account), c.bindings.UnpackIsMember)
}

// Settle submits a settlement with its members' signatures, in any order.
// It checks locally what the contract would refuse in the lists and the
// signatures (each one verified against this contract's domain), so a
// broken settlement costs no gas.
func (c *Client) Settle(ctx context.Context, s Settlement, sigs []SignedBy) (*types.Receipt, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(sigs) == 0 || len(sigs) > MaxMembers {
		return nil, fmt.Errorf("%w: %d signatures (1..%d)", ErrBadSettlement, len(sigs), MaxMembers)
	}
	sorted := slices.Clone(sigs)
	slices.SortFunc(sorted, func(a, b SignedBy) int { return bytes.Compare(a.Signer[:], b.Signer[:]) })
	signers := make([]common.Address, len(sorted))
	packed := make([][]byte, len(sorted))
	d := c.Domain()
	for i, sb := range sorted {
		if i > 0 && sb.Signer == sorted[i-1].Signer {
			return nil, fmt.Errorf("%w: %s signs twice", ErrBadSettlement, sb.Signer)
		}
		if err := VerifySettlement(d, s, sb.Signer, sb.Signature); err != nil {
			return nil, err
		}
		signers[i], packed[i] = sb.Signer, sb.Signature
	}
	data := c.bindings.PackSettle(s.Key, s.Seed, s.ResultRoot, s.VerifierHash, s.Payees, s.Amounts, nonNil(s.Culprits), signers, packed)
	return c.send(ctx, "settle", nil, data, false)
}

func nonNil(list []common.Address) []common.Address {
	if list == nil {
		return []common.Address{}
	}
	return list
}

// Refund credits the escrow of a job past its deadline back to its creator.
func (c *Client) Refund(ctx context.Context, key common.Hash) (*types.Receipt, error) {
	return c.send(ctx, "refund", nil, c.bindings.PackRefund(key), false)
}

// Abort credits the escrow of a job no processor has joined back to its
// creator; only the creator may call it.
func (c *Client) Abort(ctx context.Context, key common.Hash) (*types.Receipt, error) {
	return c.send(ctx, "abort", nil, c.bindings.PackAbort(key), false)
}

// Job reads a job's record.
func (c *Client) Job(ctx context.Context, key common.Hash) (Job, error) {
	out, err := call(ctx, c, c.bindings.PackGetJob(key), c.bindings.UnpackGetJob)
	if err != nil {
		return Job{}, err
	}
	j := Job{
		Creator:  out.Creator,
		Amount:   out.Amount,
		Deadline: time.Unix(int64(out.Deadline), 0),
		State:    JobState(out.State),
		Members:  int(out.Members),
		Terms:    Terms{Quiet: time.Duration(out.Quiet) * time.Second, MinSigners: out.MinSigners},
	}
	if out.LastJoin != 0 {
		j.LastJoin = time.Unix(int64(out.LastJoin), 0)
	}
	if out.ClosedAtBlock != nil {
		j.ClosedAtBlock = out.ClosedAtBlock.Uint64()
	}
	return j, nil
}

// ContractDigest asks the contract for a settlement's digest; it equals
// s.Digest(c.Domain()).
func (c *Client) ContractDigest(ctx context.Context, s Settlement) (common.Hash, error) {
	data := c.bindings.PackSettlementDigest(s.Key, s.Seed, s.ResultRoot, s.VerifierHash, s.Payees, s.Amounts, nonNil(s.Culprits))
	h, err := call(ctx, c, data, c.bindings.UnpackSettlementDigest)
	return common.Hash(h), err
}

// WaitReleased polls job key until it is closed (the DApp's side). For a
// settled job it returns the payouts from the EscrowReleased event; for a
// refunded or aborted one, ErrNotReleased.
func (c *Client) WaitReleased(ctx context.Context, key common.Hash) (*Release, error) {
	tick := time.NewTicker(c.cfg.ReleasePoll)
	defer tick.Stop()
	for {
		j, err := c.Job(ctx, key)
		if err != nil {
			return nil, err
		}
		switch j.State {
		case JobSettled:
			return c.release(ctx, key, j.ClosedAtBlock)
		case JobRefunded, JobAborted:
			return nil, fmt.Errorf("%w: job %s %s at block %d", ErrNotReleased, key, j.State, j.ClosedAtBlock)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// Released reads a job's state and, when it is settled, its payouts (one
// look, no waiting): nil with the state while it is not settled.
func (c *Client) Released(ctx context.Context, key common.Hash) (*Release, Job, error) {
	j, err := c.Job(ctx, key)
	if err != nil || j.State != JobSettled {
		return nil, j, err
	}
	r, err := c.release(ctx, key, j.ClosedAtBlock)
	return r, j, err
}

func (c *Client) release(ctx context.Context, key common.Hash, block uint64) (*Release, error) {
	ev := c.abi.Events["EscrowReleased"]
	q := ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(block),
		ToBlock:   new(big.Int).SetUint64(block),
		Addresses: []common.Address{c.cfg.Contract},
		Topics:    [][]common.Hash{{ev.ID}, {key}},
	}
	logs, err := retryValue(ctx, c, func() ([]types.Log, error) { return c.backend.FilterLogs(ctx, q) })
	c.metrics.read("logs", err)
	if err != nil {
		return nil, err
	}
	for i := range logs {
		e, err := c.bindings.UnpackEscrowReleasedEvent(&logs[i])
		if err != nil {
			continue
		}
		return &Release{
			Key: key, ResultRoot: e.ResultRoot, VerifierHash: e.VerifierHash,
			Payees: e.Payees, Amounts: e.Amounts, Refund: e.Refund,
			Block: logs[i].BlockNumber, TxHash: logs[i].TxHash,
		}, nil
	}
	return nil, fmt.Errorf("escrow: job %s settled at block %d but no EscrowReleased log found", key, block)
}

// BlockTime returns when block was made: its header's timestamp.
func (c *Client) BlockTime(ctx context.Context, block uint64) (time.Time, error) {
	h, err := retryValue(ctx, c, func() (*types.Header, error) {
		return c.backend.HeaderByNumber(ctx, new(big.Int).SetUint64(block))
	})
	c.metrics.read("header", err)
	if err != nil {
		return time.Time{}, fmt.Errorf("escrow: header of block %d: %w", block, err)
	}
	return time.Unix(int64(h.Time), 0), nil
}

// Owed is what the escrow owes, as far as the given jobs and accounts
// go: the amount of every job of keys that is still funded, the credit
// and the stake (active and pending) of every account, and the stake it
// burned. A contract whose every job and account are given holds exactly
// this much.
func (c *Client) Owed(ctx context.Context, keys []common.Hash, accounts []common.Address) (*big.Int, error) {
	owed := new(big.Int)
	for _, key := range keys {
		j, err := c.Job(ctx, key)
		if err != nil {
			return nil, err
		}
		if j.State == JobFunded {
			owed.Add(owed, j.Amount)
		}
	}
	for _, a := range accounts {
		cr, err := c.CreditOf(ctx, a)
		if err != nil {
			return nil, err
		}
		st, err := c.StakeOf(ctx, a)
		if err != nil {
			return nil, err
		}
		owed.Add(owed, cr).Add(owed, st.Active).Add(owed, st.Pending)
	}
	burned, err := c.TotalBurned(ctx)
	if err != nil {
		return nil, err
	}
	return owed.Add(owed, burned), nil
}
