package processor

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
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

// funded reports whether this processor may work on js: with a chain,
// the escrow holds it funded and this processor joined it
// (membership.Joiner.Funded); without one every job counts as funded.
func (w *Worker) funded(ctx context.Context, js *jobState, now time.Time) bool {
	if w.joiner == nil {
		return true
	}
	return w.joiner.Funded(ctx, js.plan().JobID, js.info, now)
}

// infoOf is js's job, nil for no job.
func infoOf(js *jobState) *jobs.JobInfo {
	if js == nil {
		return nil
	}
	return js.info
}

// Wallets returns the worker's view of the wallet bindings.
func (w *Worker) Wallets() *membership.Wallets { return w.wallets }

// markChainDone marks job id settled on chain (by anyone), or not
// settleable: the settle loop leaves it.
func (w *Worker) markChainDone(id jobs.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js := w.known[id]; js != nil {
		js.chainDone = true
	}
}

// startEscrow makes the worker's views of wallet bindings and escrow
// membership and, with a chain, its joiner and settler; the bindings are
// followed until runCtx ends.
func (w *Worker) startEscrow(ctx, runCtx context.Context) error {
	w.wallets = membership.NewWallets(w.p.Store, w.p.Chain != nil, w.p.Registerer, w.log)
	var chain membership.MemberReader
	if w.p.Chain != nil {
		chain = w.p.Chain
	}
	w.members = membership.NewView(chain, w.cfg.FundingBackoff, w.p.Registerer, w.log)
	if w.p.Chain != nil {
		w.joiner = membership.NewJoiner(w.p.Chain, w.members, membership.JoinConfig{
			Wallet: common.HexToAddress(w.cfg.Wallet), Backoff: w.cfg.FundingBackoff, SkipJoin: w.cfg.SkipJoin,
		}, w.p.Registerer, w.log)
		var err error
		if w.settler, err = w.newSettler(ctx); err != nil {
			return err
		}
	}
	return w.wallets.Start(runCtx, &w.wg)
}

// newSettler returns the settler of this processor's finished jobs on
// its chain.
func (w *Worker) newSettler(ctx context.Context) (*settlement.Settler, error) {
	cfg := settlement.DefaultConfig()
	cfg.Dispatch, cfg.Poll, cfg.Fallback, cfg.BeforeSettle = w.cfg.Dispatch, w.cfg.Poll, w.cfg.SettleFallback, w.cfg.BeforeSettle
	s, err := settlement.New(ctx, settlement.Params{
		Chain: w.p.Chain, Key: w.p.WalletKey, Self: w.self, Store: w.writer, Verdicts: settleVerdicts{w},
		Members: w.members, Wallets: w.wallets, Logger: w.log, Registerer: w.p.Registerer, Now: w.p.Now,
	}, cfg)
	if err != nil {
		return nil, fmt.Errorf("processor: %w", err)
	}
	return s, nil
}

// settleVerdicts is the worker's judgement of its finished jobs, as its
// settler reads it.
type settleVerdicts struct{ w *Worker }

func (v settleVerdicts) Records(ctx context.Context, id jobs.ID) (*finish.Records, error) {
	ver := v.w.inputsVersion(id) // before the records: see verdictState.judgedVer
	recs, err := v.w.records(ctx, id)
	if err != nil {
		return nil, err
	}
	v.w.mu.Lock()
	if js := v.w.known[id]; js != nil {
		js.verdicts.auditVer = ver
	}
	v.w.mu.Unlock()
	return recs, nil
}

func (v settleVerdicts) Audit(ctx context.Context, id jobs.ID, recs *finish.Records) (records.VerdictRecord, microjob.Verdict, error) {
	v.w.mu.Lock()
	js := v.w.known[id]
	v.w.mu.Unlock()
	if js == nil {
		return records.VerdictRecord{}, microjob.Verdict{}, fmt.Errorf("processor: unknown job %s", id)
	}
	return v.w.audit(ctx, js, recs)
}

// settleAll takes a step of the on-chain settlement of every finished
// job not yet settled.
func (w *Worker) settleAll(ctx context.Context) {
	if w.settler == nil {
		return
	}
	w.mu.Lock()
	var todo []settlement.Job
	for _, js := range w.known {
		if (js.finished || failedLocked(js)) && !js.chainDone {
			todo = append(todo, settlingLocked(js, w.self))
		}
	}
	w.mu.Unlock()
	for _, id := range w.settler.Tick(ctx, todo) {
		w.markChainDone(id)
	}
}

// settlingLocked is js as its settler sees it; w.mu is held.
func settlingLocked(js *jobState, self string) settlement.Job {
	j := settlement.Job{ID: js.plan().JobID, Info: js.info, Finalizer: js.finalizer, FinishedAt: js.verdicts.finishedAt}
	if fj := js.fail.job; fj != nil {
		// A failure settlement is submitted by its lowest reporter, and
		// by the other signers once it stays unsubmitted (Fallback).
		j.Failed, j.Finalizer = fj, len(fj.Reporters) > 0 && fj.Reporters[0] == self
	}
	return j
}

// SettlementStatus reports how many members of a finished job have signed
// the settlement this processor derives, as its replica shows, and how
// many members the job has on chain; settled is true once the job is
// settled.
func (w *Worker) SettlementStatus(ctx context.Context, id jobs.ID) (signed, members int, settled bool, err error) {
	j, err := w.settling(id)
	if err != nil {
		return 0, 0, false, err
	}
	return w.settler.Status(ctx, j)
}

// SubmitSettlement sends the job's settle transaction if a quorum of its
// members (as the contract counts them) has signed the settlement this
// processor derives (settlement.Settler.Submit). It reports whether this
// call's transaction settled the job; a job already settled is no error.
func (w *Worker) SubmitSettlement(ctx context.Context, id jobs.ID) (bool, error) {
	j, err := w.settling(id)
	if err != nil {
		return false, err
	}
	settled, done, err := w.settler.Submit(ctx, j)
	if done {
		w.markChainDone(id)
	}
	return settled, err
}

// settling is job id as the settler sees it.
func (w *Worker) settling(id jobs.ID) (settlement.Job, error) {
	if w.settler == nil {
		return settlement.Job{}, fmt.Errorf("%w: no chain", ErrInvalidConfig)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	js := w.known[id]
	if js == nil {
		return settlement.Job{}, fmt.Errorf("processor: unknown job %s", id)
	}
	return settlingLocked(js, w.self), nil
}
