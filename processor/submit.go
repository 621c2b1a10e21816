package processor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
)

// SettlementStatus reports how many members of a finished job have signed
// the settlement this processor derives, as its replica shows, and how
// many members the job has on chain; settled is true once the job is
// settled.
func (w *Worker) SettlementStatus(ctx context.Context, id jobs.ID) (signed, members int, settled bool, err error) {
	js, err := w.chainJobState(id)
	if err != nil {
		return 0, 0, false, err
	}
	cv, err := w.view(ctx, js)
	if err != nil || cv.settled {
		return 0, 0, cv.settled, err
	}
	j, err := w.chainJob(ctx, js, false)
	if err != nil {
		return 0, 0, false, err
	}
	return len(cv.sigs), j.Members, false, nil
}

func (w *Worker) chainJobState(id jobs.ID) (*jobState, error) {
	if w.p.Chain == nil {
		return nil, fmt.Errorf("%w: no chain", ErrInvalidConfig)
	}
	w.mu.Lock()
	js := w.known[id]
	w.mu.Unlock()
	if js == nil {
		return nil, fmt.Errorf("processor: unknown job %s", id)
	}
	return js, nil
}

// SubmitSettlement sends the job's settle transaction if a quorum of its
// members (as the contract counts them) has signed the settlement this
// processor derives, first waiting, while ctx allows, for the quiet
// period after the job's last join to end. It reports whether this call's
// transaction settled the job; a job already settled (by another
// processor, seen on chain or as a revert) is no error. A join that lands
// meanwhile restarts the quiet period: the settle then reverts TooEarly,
// which is returned wrapping errNotOpen, not counted as a failure.
func (w *Worker) SubmitSettlement(ctx context.Context, id jobs.ID) (bool, error) {
	js, err := w.chainJobState(id)
	if err != nil {
		return false, err
	}
	cv, err := w.view(ctx, js)
	if err != nil {
		return false, err
	}
	if cv.settled {
		w.markChainDone(js)
		return false, nil
	}
	j, err := w.awaitOpen(ctx, js)
	if err != nil {
		return false, err
	}
	if j.State != escrow.JobFunded {
		w.markChainDone(js)
		w.log.Info("job already closed on chain; not settling", "job", id, "state", j.State)
		return false, nil
	}
	if !settlement.Quorum(len(cv.sigs), j, w.quorumNum, w.quorumDen) {
		return false, fmt.Errorf("%w: %d of %d members signed, %d needed at least", errNoQuorum, len(cv.sigs), j.Members, j.Terms.MinSigners)
	}
	rcpt, err := w.p.Chain.Settle(ctx, cv.own, cv.sigs)
	if errors.Is(err, escrow.ErrJobNotFunded) || (errors.Is(err, escrow.ErrReverted) && w.closedOnChain(ctx, js)) {
		// Another processor's settle landed first.
		w.markChainDone(js)
		w.m.settlements.WithLabelValues("lost").Inc()
		w.log.Info("another processor settled the job first", "job", id)
		return false, nil
	}
	if errors.Is(err, escrow.ErrTooEarly) {
		w.m.settlements.WithLabelValues("early").Inc()
		return false, fmt.Errorf("%w: a processor joined meanwhile: %w", errNotOpen, err)
	}
	if err != nil {
		w.m.settlements.WithLabelValues("failed").Inc()
		return false, fmt.Errorf("settle: %w", err)
	}
	w.markChainDone(js)
	w.m.settlements.WithLabelValues("submitted").Inc()
	w.log.Info("job settled on chain", "job", id, "tx", rcpt.TxHash, "block", rcpt.BlockNumber,
		"signers", len(cv.sigs), "members", j.Members, "payees", len(cv.own.Payees), "culprits", len(cv.own.Culprits))
	rec := records.SettledRecord{Version: records.SettledRecordVersion, Tx: strings.ToLower(rcpt.TxHash.Hex()), Block: rcpt.BlockNumber.Uint64(), Submitter: w.self}
	if err := crdt.PutJSON(ctx, w.writer, records.SettledKey(id), records.SettledType, rec); err != nil {
		w.log.Warn("recording the settle transaction", "job", id, "err", err)
	}
	return true, nil
}

// awaitOpen reads js's escrow until it is closed or may be settled by
// the chain's clock (the quiet period after the last join is over),
// reading again every Poll, and returns it.
func (w *Worker) awaitOpen(ctx context.Context, js *jobState) (escrow.Job, error) {
	for {
		j, err := w.chainJob(ctx, js, true)
		if err != nil || j.State != escrow.JobFunded {
			return j, err
		}
		open, err := w.settleOpen(ctx, js, j)
		if err != nil || open {
			return j, err
		}
		t := time.NewTimer(w.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return j, ctx.Err()
		case <-t.C:
		}
	}
}
