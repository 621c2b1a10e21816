package settlement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/records"
)

// Status reports how many members of finished job j have signed the
// settlement this processor derives, as its replica shows, and how many
// members the job has on chain; settled is true once the job is settled.
func (s *Settler) Status(ctx context.Context, j Job) (signed, members int, settled bool, err error) {
	cv, err := s.view(ctx, j)
	if err != nil || cv.settled {
		return 0, 0, cv.settled, err
	}
	cj, err := s.chainJob(ctx, j, false)
	if err != nil {
		return 0, 0, false, err
	}
	return len(cv.sigs), cj.Members, false, nil
}

// Submit sends job j's settle transaction if a quorum of its members (as
// the contract counts them) has signed the settlement this processor
// derives, first waiting, while ctx allows, for the quiet period after
// the job's last join to end. It reports whether this call's transaction
// settled the job, and whether the job is done (Step); a job already
// settled (by another processor, seen on chain or as a revert) is no
// error. A join that lands meanwhile restarts the quiet period: the
// settle then reverts TooEarly, which is returned wrapping ErrNotOpen,
// not counted as a failure.
func (s *Settler) Submit(ctx context.Context, j Job) (settled, done bool, err error) {
	settled, done, err = s.submit(ctx, j)
	if done {
		s.forget(j.ID)
	}
	return settled, done, err
}

func (s *Settler) submit(ctx context.Context, j Job) (settled, done bool, err error) {
	cv, err := s.view(ctx, j)
	if err != nil {
		return false, false, err
	}
	if cv.settled {
		return false, true, nil
	}
	cj, err := s.awaitOpen(ctx, j)
	if err != nil {
		return false, false, err
	}
	if cj.State != escrow.JobFunded {
		s.log.Info("job already closed on chain; not settling", "job", j.ID, "state", cj.State)
		return false, true, nil
	}
	if !Quorum(len(cv.sigs), cj, s.quorumNum, s.quorumDen) {
		return false, false, fmt.Errorf("%w: %d of %d members signed, %d needed at least", ErrNoQuorum, len(cv.sigs), cj.Members, cj.Terms.MinSigners)
	}
	rcpt, err := s.p.Chain.Settle(ctx, cv.own, cv.sigs)
	if errors.Is(err, escrow.ErrJobNotFunded) || (errors.Is(err, escrow.ErrReverted) && s.closedOnChain(ctx, j)) {
		// Another processor's settle landed first.
		s.m.settlements.WithLabelValues("lost").Inc()
		s.log.Info("another processor settled the job first", "job", j.ID)
		return false, true, nil
	}
	if errors.Is(err, escrow.ErrTooEarly) {
		s.m.settlements.WithLabelValues("early").Inc()
		return false, false, fmt.Errorf("%w: a processor joined meanwhile: %w", ErrNotOpen, err)
	}
	if err != nil {
		s.m.settlements.WithLabelValues("failed").Inc()
		return false, false, fmt.Errorf("settle: %w", err)
	}
	s.m.settlements.WithLabelValues("submitted").Inc()
	s.log.Info("job settled on chain", "job", j.ID, "tx", rcpt.TxHash, "block", rcpt.BlockNumber,
		"signers", len(cv.sigs), "members", cj.Members, "payees", len(cv.own.Payees), "culprits", len(cv.own.Culprits))
	s.putSettled(ctx, j, cv, rcpt.TxHash, rcpt.BlockNumber.Uint64())
	return true, true, nil
}

// putSettled records the settle transaction of a job this processor
// settled and, with a verdict, its outcome summary for the nodes that
// hold none of its records: one store update, one delta for a late
// joiner to walk.
func (s *Settler) putSettled(ctx context.Context, j Job, cv view, tx common.Hash, block uint64) {
	rec := records.SettledRecord{Version: records.SettledRecordVersion, Tx: strings.ToLower(tx.Hex()), Block: block, Submitter: s.p.Self}
	e, err := crdt.JSONEntry(records.SettledKey(j.ID), records.SettledType, rec)
	if err != nil {
		s.log.Warn("recording the settle transaction", "job", j.ID, "err", err)
		return
	}
	entries := []crdt.Entry{e}
	if cv.verdict != nil {
		sum, err := records.NewSummary(records.SummarySettled, *cv.verdict, cv.v, tx, block)
		var b []byte
		if err == nil {
			b, err = records.EncodeSummaryRecord(sum)
		}
		if err != nil {
			s.log.Warn("recording the outcome summary", "job", j.ID, "err", err)
		} else {
			entries = append(entries, crdt.Entry{Key: records.SummaryKey(j.ID, s.p.Self), Type: records.SummaryType, Payload: b})
		}
	}
	if err := s.p.Store.PutBatch(ctx, entries); err != nil {
		s.log.Warn("recording the settle transaction and outcome summary", "job", j.ID, "err", err)
	}
}

// awaitOpen reads j's escrow until it is closed or may be settled by the
// chain's clock (the quiet period after the last join is over), reading
// again every Poll, and returns it.
func (s *Settler) awaitOpen(ctx context.Context, j Job) (escrow.Job, error) {
	for {
		cj, err := s.chainJob(ctx, j, true)
		if err != nil || cj.State != escrow.JobFunded {
			return cj, err
		}
		open, err := s.settleOpen(ctx, j, cj)
		if err != nil || open {
			return cj, err
		}
		t := time.NewTimer(s.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return cj, ctx.Err()
		case <-t.C:
		}
	}
}

// chainJobTTL is how long chainJob reuses a read of the job on chain, in
// Polls: its members and last join change only while processors join.
const chainJobTTL = 2

// chainJob returns j's escrow as the chain shows it, read again when the
// last read is older than chainJobTTL Polls or fresh is set.
func (s *Settler) chainJob(ctx context.Context, j Job, fresh bool) (escrow.Job, error) {
	now := s.p.Now()
	s.mu.Lock()
	st := s.jobStateLocked(j)
	cj, at := st.job, st.jobAt
	s.mu.Unlock()
	if !fresh && !at.IsZero() && now.Sub(at) < chainJobTTL*s.cfg.Poll {
		return cj, nil
	}
	cj, err := s.p.Chain.Job(ctx, membership.EscrowKey(j.Info))
	if err != nil {
		return cj, err
	}
	s.mu.Lock()
	st = s.jobStateLocked(j)
	st.job, st.jobAt = cj, now
	s.mu.Unlock()
	return cj, nil
}

// settleOpen reports whether job cj may be settled now: the chain's clock
// (its latest block) has passed the quiet period after the last join.
// The first time it has not, it says so once.
func (s *Settler) settleOpen(ctx context.Context, j Job, cj escrow.Job) (bool, error) {
	now, err := s.p.Chain.Now(ctx)
	if err != nil {
		return false, err
	}
	open := !now.Before(cj.SettleOpensAt())
	s.mu.Lock()
	st := s.jobStateLocked(j)
	told := st.waiting
	st.waiting = !open
	s.mu.Unlock()
	if !open && !told {
		s.log.Info("settlement signed; waiting for the quiet period after the last join", "job", j.ID,
			"members", cj.Members, "opens", cj.SettleOpensAt(), "chainTime", now)
	}
	return open, nil
}

// closedOnChain reports whether the job is no longer Funded on chain. A
// settle mined in the same block as the winning one reverts with a reason
// that replaying it on the parent block cannot show; the job's state can.
func (s *Settler) closedOnChain(ctx context.Context, j Job) bool {
	cj, err := s.chainJob(ctx, j, true)
	return err == nil && cj.State != escrow.JobFunded
}
