package processor

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
)

// errNoQuorum: too few payees have signed the settlement yet.
var errNoQuorum = errors.New("processor: settlement signatures below quorum")

// checkChainParams checks that the wallet key, if there is a chain, is the
// configured wallet.
func checkChainParams(p Params, cfg Config) error {
	if p.Chain == nil {
		return nil
	}
	if p.WalletKey == nil {
		return fmt.Errorf("%w: a chain needs the wallet key", ErrInvalidConfig)
	}
	if addr := strings.ToLower(ethcrypto.PubkeyToAddress(p.WalletKey.PublicKey).Hex()); addr != cfg.Wallet {
		return fmt.Errorf("%w: wallet key is %s, configured wallet %s", ErrInvalidConfig, addr, cfg.Wallet)
	}
	return nil
}

// funded reports whether the escrow holds js funded for its price with a
// deadline ahead. A yes is kept; a no is asked again after a backoff that
// doubles up to 32 × FundingBackoff. Without a chain every job counts as
// funded.
func (w *Worker) funded(ctx context.Context, js *jobState, now time.Time) bool {
	if w.p.Chain == nil {
		return true
	}
	w.mu.Lock()
	if js.funded || now.Before(js.fundNext) {
		ok := js.funded
		w.mu.Unlock()
		return ok
	}
	w.mu.Unlock()
	id := js.plan.JobID
	key := chainKey(js)
	j, err := w.p.Chain.Job(ctx, key)
	ok := err == nil && j.State == escrow.JobFunded && j.Amount.Cmp(js.info.PriceWei) >= 0 && j.Deadline.After(now)
	if ok {
		// The escrow counts signatures, payees and culprits among the
		// job's members only: a processor joins before it works.
		err = w.joinEscrow(ctx, key)
		ok = err == nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		js.funded = true
		w.log.Info("job escrow funded", "job", id, "amount", j.Amount)
		return true
	}
	js.fundWait = min(max(2*js.fundWait, w.cfg.FundingBackoff), 32*w.cfg.FundingBackoff)
	js.fundNext = now.Add(js.fundWait)
	w.m.unfunded.Inc()
	if err != nil {
		w.log.Warn("skipping job: cannot read or join its escrow", "job", id, "recheck", js.fundWait, "err", err)
	} else {
		w.log.Info("skipping job: escrow not funded", "job", id, "state", j.State, "amount", j.Amount,
			"price", js.info.PriceWei, "deadline", j.Deadline, "recheck", js.fundWait)
	}
	return false
}

// chainKey is the job's escrow key: its ID bound to its creator, so only
// the creator's own escrow counts as the job's funding.
func chainKey(js *jobState) common.Hash {
	return escrow.JobKey(common.Address(js.info.Creator), common.Hash(js.plan.JobID))
}

// joinEscrow makes this processor's wallet a member of job key, unless it is one.
func (w *Worker) joinEscrow(ctx context.Context, key common.Hash) error {
	member, err := w.p.Chain.IsMember(ctx, key, w.wallet())
	if err != nil || member {
		return err
	}
	if _, err := w.p.Chain.Join(ctx, key); err != nil && !errors.Is(err, escrow.ErrAlreadyMember) {
		return fmt.Errorf("joining the job's escrow: %w", err)
	}
	return nil
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
		// A refused signature is logged once, by the audit; an unbound
		// payee once, by the wallets view.
		if err := w.settleJob(ctx, js); err != nil && ctx.Err() == nil && !errors.Is(err, errNoQuorum) &&
			!errors.Is(err, errSignRefused) && !errors.Is(err, ErrUnboundPayee) {
			w.log.Warn("settling on chain", "job", js.plan.JobID, "err", err)
		}
	}
}

// chainView is what the store says about a job's settlement, with the
// settlement this processor derives itself.
type chainView struct {
	own      escrow.Settlement
	proposal *escrow.Settlement
	sigs     [][]byte // by payee index of own; nil where missing
	signed   int
	mine     bool // this processor's signature is in the store
	settled  bool
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
	if recs.settled {
		cv.settled = true
		return cv, nil
	}
	// The verdict this processor recomputed itself (audit.go).
	vr, v, err := w.audit(ctx, js, recs)
	if err != nil {
		return cv, err
	}
	// Payees and culprits are bound wallets, never ones a record claims.
	if err := w.wallets.checkPayees(id, vr, v); err != nil {
		return cv, err
	}
	cv.own, err = DeriveSettlement(w.cfg.Dispatch, js.info, vr, v, w.wallets.culpritWallets(vr.Culprits))
	if err != nil {
		return cv, err
	}
	cv.proposal = recs.proposal
	domain := w.p.Chain.Domain()
	digest := cv.own.Digest(domain)
	cv.sigs = make([][]byte, len(cv.own.Payees))
	for _, s := range recs.sigs {
		if s.Settlement.Digest(domain) != digest || s.Domain.Separator() != domain.Separator() {
			continue
		}
		i := slices.Index(cv.own.Payees, s.Signer)
		if i < 0 || cv.sigs[i] != nil {
			continue
		}
		cv.sigs[i] = s.Signature
		cv.signed++
		if s.Signer == w.wallet() {
			cv.mine = true
		}
	}
	return cv, nil
}

func (w *Worker) wallet() common.Address { return common.HexToAddress(w.cfg.Wallet) }

func sameSettlement(a, b escrow.Settlement) bool {
	return a.Digest(escrow.Domain{}) == b.Digest(escrow.Domain{})
}

// settleJob takes one step of a finished job's settlement: the finalizer
// proposes, payees that agree sign, and once a quorum has signed the
// finalizer submits.
func (w *Worker) settleJob(ctx context.Context, js *jobState) error {
	id := js.plan.JobID
	cv, err := w.view(ctx, js)
	if errors.Is(err, ErrNotSettleable) {
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
	if cv.proposal == nil || !sameSettlement(*cv.proposal, cv.own) {
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
		if err := crdt.PutJSON(ctx, w.writer, SettlementKey(id), SettlementType, NewSettlementRecord(cv.own)); err != nil {
			return fmt.Errorf("writing settlement: %w", err)
		}
		w.log.Info("settlement proposed", "job", id, "payees", len(cv.own.Payees), "culprits", len(cv.own.Culprits))
		return nil
	}
	if !cv.mine && slices.Contains(cv.own.Payees, w.wallet()) {
		if err := w.sign(ctx, id, cv.own); err != nil {
			return err
		}
		return nil // the next pass sees the signature
	}
	hasQuorum := quorum(cv.signed, len(cv.own.Payees), w.quorumNum, w.quorumDen)
	// A payee steps in when a signed settlement stays unsubmitted for
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
	if w.cfg.BeforeSettle != nil {
		if !hasQuorum {
			return errNoQuorum
		}
		if !w.cfg.BeforeSettle(id, fallback) {
			return nil
		}
	}
	if fallback && !finalizer {
		w.log.Info("signed settlement left unsubmitted; submitting it", "job", id)
	}
	_, err = w.SubmitSettlement(ctx, id)
	return err
}

// closedOnChain reports whether the job is no longer Funded on chain. A
// settle mined in the same block as the winning one reverts with a reason
// that replaying it on the parent block cannot show; the job's state can.
func (w *Worker) closedOnChain(ctx context.Context, js *jobState) bool {
	j, err := w.p.Chain.Job(ctx, chainKey(js))
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
	if err := w.writer.Put(ctx, SignatureKey(id, w.self), SignatureType, b); err != nil {
		return fmt.Errorf("writing settlement signature: %w", err)
	}
	w.m.signatures.Inc()
	w.log.Info("settlement signed", "job", id, "wallet", w.cfg.Wallet)
	return nil
}

func quorum(signed, n int, num, den *big.Int) bool {
	if num == nil || den == nil {
		return signed == n
	}
	l := new(big.Int).Mul(big.NewInt(int64(signed)), den)
	r := new(big.Int).Mul(big.NewInt(int64(n)), num)
	return l.Cmp(r) >= 0
}

// SettlementStatus reports how many payees of the settlement this
// processor derives for a finished job have signed it, as its replica
// shows; settled is true once the job is settled.
func (w *Worker) SettlementStatus(ctx context.Context, id jobs.ID) (signed, payees int, settled bool, err error) {
	if w.p.Chain == nil {
		return 0, 0, false, fmt.Errorf("%w: no chain", ErrInvalidConfig)
	}
	w.mu.Lock()
	js := w.known[id]
	w.mu.Unlock()
	if js == nil {
		return 0, 0, false, fmt.Errorf("processor: unknown job %s", id)
	}
	cv, err := w.view(ctx, js)
	if err != nil {
		return 0, 0, false, err
	}
	return cv.signed, len(cv.own.Payees), cv.settled, nil
}

// SubmitSettlement sends the job's settle transaction if a quorum of the
// payees has signed the settlement this processor derives. It reports
// whether this call's transaction settled the job; a job already settled
// (by another processor, seen on chain or as a revert) is no error.
func (w *Worker) SubmitSettlement(ctx context.Context, id jobs.ID) (bool, error) {
	if w.p.Chain == nil {
		return false, fmt.Errorf("%w: no chain", ErrInvalidConfig)
	}
	w.mu.Lock()
	js := w.known[id]
	w.mu.Unlock()
	if js == nil {
		return false, fmt.Errorf("processor: unknown job %s", id)
	}
	cv, err := w.view(ctx, js)
	if err != nil {
		return false, err
	}
	if cv.settled {
		w.markChainDone(js)
		return false, nil
	}
	if !quorum(cv.signed, len(cv.own.Payees), w.quorumNum, w.quorumDen) {
		return false, fmt.Errorf("%w: %d of %d", errNoQuorum, cv.signed, len(cv.own.Payees))
	}
	j, err := w.p.Chain.Job(ctx, chainKey(js))
	if err != nil {
		return false, err
	}
	if j.State != escrow.JobFunded {
		w.markChainDone(js)
		w.log.Info("job already closed on chain; not settling", "job", id, "state", j.State)
		return false, nil
	}
	var sigs []escrow.SignedBy
	for i, sig := range cv.sigs {
		if sig != nil {
			sigs = append(sigs, escrow.SignedBy{Signer: cv.own.Payees[i], Signature: sig})
		}
	}
	rcpt, err := w.p.Chain.Settle(ctx, cv.own, sigs)
	if errors.Is(err, escrow.ErrJobNotFunded) || (errors.Is(err, escrow.ErrReverted) && w.closedOnChain(ctx, js)) {
		// Another processor's settle landed first.
		w.markChainDone(js)
		w.m.settlements.WithLabelValues("lost").Inc()
		w.log.Info("another processor settled the job first", "job", id)
		return false, nil
	}
	if err != nil {
		w.m.settlements.WithLabelValues("failed").Inc()
		return false, fmt.Errorf("settle: %w", err)
	}
	w.markChainDone(js)
	w.m.settlements.WithLabelValues("submitted").Inc()
	w.log.Info("job settled on chain", "job", id, "tx", rcpt.TxHash, "block", rcpt.BlockNumber, "payees", len(cv.own.Payees), "culprits", len(cv.own.Culprits))
	rec := SettledRecord{Version: SettledRecordVersion, Tx: strings.ToLower(rcpt.TxHash.Hex()), Block: rcpt.BlockNumber.Uint64(), Submitter: w.self}
	if err := crdt.PutJSON(ctx, w.writer, SettledKey(id), SettledType, rec); err != nil {
		w.log.Warn("recording the settle transaction", "job", id, "err", err)
	}
	return true, nil
}

// addSettlement keeps the settlement records of job id that are where
// they belong and decode; records() calls it. A settlement names the job by
// its escrow key, which view() checks by comparing each with the
// settlement it derives itself.
func (out *jobRecords) addSettlement(id jobs.ID, key, author string, typ string, payload []byte) {
	switch typ {
	case SettlementType:
		if key != SettlementKey(id) {
			return
		}
		if s, err := DecodeSettlementRecord(payload); err == nil {
			out.proposal = &s
		}
	case SignatureType:
		if key != SignatureKey(id, author) {
			return
		}
		if s, err := DecodeSignatureRecord(payload); err == nil {
			out.sigs = append(out.sigs, s)
		}
	case SettledType:
		if key != SettledKey(id) {
			return
		}
		if _, err := DecodeSettledRecord(payload, author); err == nil {
			out.settled = true
		}
	}
}
