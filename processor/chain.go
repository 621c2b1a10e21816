package processor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
)

// Errors of the settle loop that are no failure: it waits and tries again
// on a later pass.
var (
	// errNoQuorum: too few members have signed the settlement yet.
	errNoQuorum = errors.New("processor: settlement signatures below quorum")
	// errNotOpen: the job's quiet period after its last join is not over.
	errNotOpen = errors.New("processor: the job's quiet period is not over")
	// errNonMemberPayee: the settlement would pay a wallet that is not a
	// member of the job (the contract would refuse it).
	errNonMemberPayee = errors.New("processor: settlement pays a wallet that is not a member of the job")
)

// checkChainParams checks that the wallet key, if there is a chain, is the
// configured wallet.
func checkChainParams(p Params, cfg Config) error {
	if p.Chain == nil {
		return nil
	}
	if err := settlement.CheckWalletKey(p.WalletKey, cfg.Wallet); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// escrowState is what a worker knows of a job's escrow beyond its funding.
type escrowState struct {
	// refused is why the escrow refused this processor's join for good
	// (joins closed, the job full): it does not work on the job.
	refused string
	// told are the join refusals already logged and counted.
	told map[string]bool
	// job is the job as last read from the chain, at jobAt (chainJob).
	job   escrow.Job
	jobAt time.Time
	// waiting: the quiet period was found not over, and said so.
	waiting bool
}

// funded reports whether this processor may work on js: the escrow holds
// it funded for its price with a deadline ahead, and this processor is a
// member (it joins here). A yes is kept; a no is asked again after a
// backoff that doubles up to 32 × FundingBackoff, except a join the
// escrow refuses for good (joins closed, the job full), which keeps the
// processor off the job. Without a chain every job counts as funded.
func (w *Worker) funded(ctx context.Context, js *jobState, now time.Time) bool {
	if w.p.Chain == nil {
		return true
	}
	w.mu.Lock()
	if js.funded || js.escrow.refused != "" || now.Before(js.fundNext) {
		ok := js.funded
		w.mu.Unlock()
		return ok
	}
	w.mu.Unlock()
	id := js.plan.JobID
	key := chainKey(js)
	j, err := w.p.Chain.Job(ctx, key)
	ok := err == nil && j.State == escrow.JobFunded && j.Amount.Cmp(js.info.PriceWei) >= 0 && j.Deadline.After(now)
	if ok && !w.cfg.SkipJoin {
		// The escrow pays, slashes and counts the signatures of the
		// job's members only: a processor joins before it works.
		err = w.joinEscrow(ctx, key)
		ok = err == nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		js.funded = true
		w.log.Info("job escrow funded", "job", id, "amount", j.Amount, "members", j.Members)
		return true
	}
	js.fundWait = min(max(2*js.fundWait, w.cfg.FundingBackoff), 32*w.cfg.FundingBackoff)
	js.fundNext = now.Add(js.fundWait)
	switch {
	case errors.Is(err, escrow.ErrReverted):
		w.refuseJoinLocked(js, err)
	case err != nil:
		w.m.unfunded.Inc()
		w.log.Warn("skipping job: cannot read or join its escrow", "job", id, "recheck", js.fundWait, "err", err)
	default:
		w.m.unfunded.Inc()
		w.log.Info("skipping job: escrow not funded", "job", id, "state", j.State, "amount", j.Amount,
			"price", js.info.PriceWei, "deadline", j.Deadline, "recheck", js.fundWait)
	}
	return false
}

// refuseJoinLocked keeps js from this processor after the escrow refused
// its join with err: for good when asking again cannot help, else until
// the funding backoff. Each reason is logged and counted once per job.
func (w *Worker) refuseJoinLocked(js *jobState, err error) {
	reason, permanent := membership.JoinRefusal(err)
	if permanent {
		js.escrow.refused = reason
	}
	if js.escrow.told[reason] {
		return
	}
	if js.escrow.told == nil {
		js.escrow.told = map[string]bool{}
	}
	js.escrow.told[reason] = true
	w.members.CountRefusal(reason)
	w.log.Warn("not working on the job: its escrow refused this processor's join", "job", js.plan.JobID,
		"reason", reason, "final", permanent, "err", err)
}

// chainKey is the job's escrow key: its ID bound to its creator, so only
// the creator's own escrow counts as the job's funding.
func chainKey(js *jobState) common.Hash { return membership.EscrowKey(js.info) }

// infoOf is js's job, nil for no job.
func infoOf(js *jobState) *jobs.JobInfo {
	if js == nil {
		return nil
	}
	return js.info
}

// Wallets returns the worker's view of the wallet bindings.
func (w *Worker) Wallets() *membership.Wallets { return w.wallets }

// joinEscrow makes this processor's wallet a member of job key, unless it
// is one.
func (w *Worker) joinEscrow(ctx context.Context, key common.Hash) error {
	member, err := w.members.IsMember(ctx, key, w.wallet())
	if err != nil || member {
		return err
	}
	if _, err := w.p.Chain.Join(ctx, key); err != nil && !errors.Is(err, escrow.ErrAlreadyMember) {
		return fmt.Errorf("joining the job's escrow: %w", err)
	}
	w.members.Joined(key, w.wallet())
	return nil
}

// chainJobTTL is how long chainJob reuses a read of the job on chain, in
// Polls: its members and last join change only while processors join.
const chainJobTTL = 2

// chainJob returns js's escrow as the chain shows it, read again when the
// last read is older than chainJobTTL Polls or fresh is set.
func (w *Worker) chainJob(ctx context.Context, js *jobState, fresh bool) (escrow.Job, error) {
	now := time.Now()
	w.mu.Lock()
	j, at := js.escrow.job, js.escrow.jobAt
	w.mu.Unlock()
	if !fresh && !at.IsZero() && now.Sub(at) < chainJobTTL*w.cfg.Poll {
		return j, nil
	}
	j, err := w.p.Chain.Job(ctx, chainKey(js))
	if err != nil {
		return j, err
	}
	w.mu.Lock()
	js.escrow.job, js.escrow.jobAt = j, now
	w.mu.Unlock()
	return j, nil
}

// settleOpen reports whether job j may be settled now: the chain's clock
// (its latest block) has passed the quiet period after the last join.
// The first time it has not, it says so once.
func (w *Worker) settleOpen(ctx context.Context, js *jobState, j escrow.Job) (bool, error) {
	now, err := w.p.Chain.Now(ctx)
	if err != nil {
		return false, err
	}
	open := !now.Before(j.SettleOpensAt())
	w.mu.Lock()
	told := js.escrow.waiting
	js.escrow.waiting = !open
	w.mu.Unlock()
	if !open && !told {
		w.log.Info("settlement signed; waiting for the quiet period after the last join", "job", js.plan.JobID,
			"members", j.Members, "opens", j.SettleOpensAt(), "chainTime", now)
	}
	return open, nil
}

// settleAll drives the on-chain settlement of every finished job not yet
// settled.
func (w *Worker) settleAll(ctx context.Context) {
	if w.p.Chain == nil {
		return
	}
	w.mu.Lock()
	var todo []*jobState
	for _, js := range w.known {
		if js.finished && !js.chainDone {
			todo = append(todo, js)
		}
	}
	w.mu.Unlock()
	for _, js := range todo {
		// Waits are no failure; a refused signature is logged once, by
		// the audit; an unbound or non-member payee once, by its view.
		err := w.settleJob(ctx, js)
		if err != nil && ctx.Err() == nil && !errors.Is(err, errNoQuorum) && !errors.Is(err, errNotOpen) &&
			!errors.Is(err, errSignRefused) && !errors.Is(err, membership.ErrUnboundPayee) && !errors.Is(err, errNonMemberPayee) {
			w.log.Warn("settling on chain", "job", js.plan.JobID, "err", err)
		}
	}
}

// chainView is what the store says about a job's settlement, with the
// settlement this processor derives itself.
type chainView struct {
	own      escrow.Settlement
	proposal *escrow.Settlement
	// sigs are the members' signatures over own, one per signer.
	sigs    []escrow.SignedBy
	mine    bool // this processor's signature is among them
	member  bool // this processor is a member of the job
	settled bool
}

// view reads a finished job's settlement records and derives its own
// settlement from the verdict it recomputed from its replica (audit).
func (w *Worker) view(ctx context.Context, js *jobState) (chainView, error) {
	id := js.plan.JobID
	recs, err := w.records(ctx, id)
	if err != nil {
		return chainView{}, err
	}
	var cv chainView
	if recs.Settled {
		cv.settled = true
		return cv, nil
	}
	// The verdict this processor recomputed itself (audit.go).
	vr, v, err := w.audit(ctx, js, recs)
	if err != nil {
		return cv, err
	}
	// Payees and culprits are bound wallets, never ones a record claims,
	// and members of the job: the contract pays and slashes no other.
	if err := w.wallets.CheckPayees(id, vr, v); err != nil {
		return cv, err
	}
	key := chainKey(js)
	culprits, err := w.members.Wallets(ctx, id, key, w.wallets.CulpritWallets(vr.Culprits), "culprit")
	if err != nil {
		return cv, err
	}
	if cv.own, err = settlement.DeriveSettlement(w.cfg.Dispatch, js.info, vr, v, culprits); err != nil {
		return cv, err
	}
	if err := w.checkMembers(ctx, js, cv.own.Payees); err != nil {
		return cv, err
	}
	cv.proposal = recs.Proposal
	if cv.sigs, err = w.memberSignatures(ctx, js, cv.own, recs.Sigs); err != nil {
		return cv, err
	}
	for _, s := range cv.sigs {
		cv.mine = cv.mine || s.Signer == w.wallet()
	}
	cv.member, err = w.members.IsMember(ctx, key, w.wallet())
	return cv, err
}

// checkMembers refuses (errNonMemberPayee) a settlement that pays a
// wallet that is not a member of js. Payees come from the disclosures of
// members only (membership.View.Filter), so this is the last guard, not the
// rule.
func (w *Worker) checkMembers(ctx context.Context, js *jobState, payees []common.Address) error {
	list := make([]string, len(payees))
	for i, p := range payees {
		list[i] = strings.ToLower(p.Hex())
	}
	members, err := w.members.Wallets(ctx, js.plan.JobID, chainKey(js), list, "payee")
	if err != nil {
		return err
	}
	if len(members) != len(list) {
		return fmt.Errorf("%w: job %s", errNonMemberPayee, js.plan.JobID)
	}
	return nil
}

// memberSignatures are the signatures of sigs that count for s: over s
// in this chain's domain, by a member of the job, one per signer.
func (w *Worker) memberSignatures(ctx context.Context, js *jobState, s escrow.Settlement, sigs []escrow.SignedSettlement) ([]escrow.SignedBy, error) {
	domain := w.p.Chain.Domain()
	digest := s.Digest(domain)
	key := chainKey(js)
	seen := map[common.Address]bool{}
	var out []escrow.SignedBy
	for _, sig := range sigs {
		if seen[sig.Signer] || sig.Settlement.Digest(domain) != digest || sig.Domain.Separator() != domain.Separator() {
			continue
		}
		ok, err := w.members.IsMember(ctx, key, sig.Signer)
		if err != nil {
			return nil, err
		}
		if !ok {
			w.members.Count("signature", js.plan.JobID.String()+" "+sig.Signer.Hex(), "settlement signature not counted: its signer is not a member of the job's escrow",
				"job", js.plan.JobID, "signer", sig.Signer)
			continue
		}
		seen[sig.Signer] = true
		out = append(out, escrow.SignedBy{Signer: sig.Signer, Signature: sig.Signature})
	}
	return out, nil
}

func (w *Worker) wallet() common.Address { return common.HexToAddress(w.cfg.Wallet) }

// settleJob takes one step of a finished job's settlement: the finalizer
// proposes, members that agree sign, and once a quorum of the members has
// signed and the quiet period after the last join is over, the finalizer
// submits.
func (w *Worker) settleJob(ctx context.Context, js *jobState) error {
	id := js.plan.JobID
	cv, err := w.view(ctx, js)
	if errors.Is(err, settlement.ErrNotSettleable) {
		w.markChainDone(js)
		w.log.Warn("verdict cannot be settled on chain", "job", id, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	if cv.settled {
		w.markChainDone(js)
		return nil
	}
	w.mu.Lock()
	finalizer := js.finalizer
	w.mu.Unlock()
	if cv.proposal == nil || !settlement.Same(*cv.proposal, cv.own) {
		return w.propose(ctx, js, cv, finalizer)
	}
	if !cv.mine && cv.member {
		return w.sign(ctx, id, cv.own) // the next pass sees the signature
	}
	if !finalizer && !cv.mine {
		return nil // neither submits nor steps in
	}
	j, err := w.chainJob(ctx, js, false)
	if err != nil {
		return err
	}
	if j.State != escrow.JobFunded {
		w.markChainDone(js)
		return nil
	}
	hasQuorum := settlement.Quorum(len(cv.sigs), j, w.quorumNum, w.quorumDen)
	// A member steps in when a signed settlement stays unsubmitted for
	// SettleFallback (its finalizers may be gone).
	fallback := false
	if hasQuorum && cv.mine {
		now := time.Now()
		w.mu.Lock()
		if js.quorumAt.IsZero() {
			js.quorumAt = now
		}
		fallback = now.Sub(js.quorumAt) >= w.cfg.SettleFallback
		w.mu.Unlock()
	}
	if !finalizer && !fallback {
		return nil
	}
	if !hasQuorum {
		return errNoQuorum
	}
	if open, err := w.settleOpen(ctx, js, j); err != nil || !open {
		return errors.Join(err, errNotOpen)
	}
	if w.cfg.BeforeSettle != nil && !w.cfg.BeforeSettle(id, fallback) {
		return nil
	}
	if fallback && !finalizer {
		w.log.Info("signed settlement left unsubmitted; submitting it", "job", id)
	}
	_, err = w.SubmitSettlement(ctx, id)
	return err
}

// propose writes this finalizer's settlement when the proposal is missing
// or differs from it; another processor only says, once, that it does
// not sign (yet).
func (w *Worker) propose(ctx context.Context, js *jobState, cv chainView, finalizer bool) error {
	id := js.plan.JobID
	if cv.proposal != nil {
		// Racing finalizers' verdicts (and so proposals) can differ
		// until the store converges on one verdict record; every
		// replica then derives the same settlement, and a finalizer
		// re-proposes it.
		w.mu.Lock()
		told := js.mismatch
		js.mismatch = true
		w.mu.Unlock()
		if !told {
			w.log.Info("not signing: the proposed settlement differs from this processor's own (yet)", "job", id)
		}
	}
	if !finalizer {
		return nil
	}
	if err := crdt.PutJSON(ctx, w.writer, records.SettlementKey(id), records.SettlementType, records.NewSettlementRecord(cv.own)); err != nil {
		return fmt.Errorf("writing settlement: %w", err)
	}
	w.log.Info("settlement proposed", "job", id, "payees", len(cv.own.Payees), "culprits", len(cv.own.Culprits))
	return nil
}

// closedOnChain reports whether the job is no longer Funded on chain. A
// settle mined in the same block as the winning one reverts with a reason
// that replaying it on the parent block cannot show; the job's state can.
func (w *Worker) closedOnChain(ctx context.Context, js *jobState) bool {
	j, err := w.chainJob(ctx, js, true)
	return err == nil && j.State != escrow.JobFunded
}

func (w *Worker) markChainDone(js *jobState) {
	w.mu.Lock()
	js.chainDone = true
	w.mu.Unlock()
}

// sign writes this processor's signature of s.
func (w *Worker) sign(ctx context.Context, id jobs.ID, s escrow.Settlement) error {
	domain := w.p.Chain.Domain()
	sig, err := escrow.SignSettlement(w.p.WalletKey, domain, s)
	if err != nil {
		return err
	}
	b, err := escrow.SignedSettlement{Domain: domain, Settlement: s, Signer: w.wallet(), Signature: sig}.MarshalBinary()
	if err != nil {
		return err
	}
	if err := w.writer.Put(ctx, records.SignatureKey(id, w.self), records.SignatureType, b); err != nil {
		return fmt.Errorf("writing settlement signature: %w", err)
	}
	w.m.signatures.Inc()
	w.log.Info("settlement signed", "job", id, "wallet", w.cfg.Wallet)
	return nil
}
