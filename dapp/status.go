package dapp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Result is a finished job.
type Result struct {
	Verdict  microjob.Verdict
	Culprits []string
	// Rounds are the verdict record's submission rounds: with the
	// verdict and culprits, what the settlement's verifierHash binds
	// (records.OutcomeDigest).
	Rounds []records.RoundOrder
	Output cid.Cid
	// Release is the escrow's payout (payees, amounts, refund, the
	// transaction); nil without a chain.
	Release *escrow.Release
}

// Status reads a job's verdict (finish.ReadVerdict) without fetching
// a body; ok is false while there is none. A verdict kept in an IPFS body
// is an error wrapping records.ErrBodyNotFetched: LoadStatus reads it.
func Status(ctx context.Context, store crdt.Reader, id jobs.ID) (Result, bool, error) {
	return LoadStatus(ctx, store, nil, id)
}

// LoadStatus reads the job's verdict that counts (finish.ReadVerdict:
// written by one of the job's finalizers and following from the records),
// fetching it from blocks when the record keeps it in a body (at most
// records.BodyFetchTimeout); ok is false while there is none. It judges
// every disclosure; on a mesh with a chain, Client.Status judges as the
// processors do.
func LoadStatus(ctx context.Context, store crdt.Reader, blocks records.BodyReader, id jobs.ID) (Result, bool, error) {
	return loadStatus(ctx, store, blocks, id, finish.Rules{})
}

// Status is LoadStatus on the client's node, judging, with a chain, by
// the processors' rules (membership.ReaderRules: only disclosures whose
// bound wallet is a member of the job's escrow, and re-run candidates
// staked before the job), so that it finds their verdict when they left a
// disclosure out or let a self-checked block stand.
func (c *Client) Status(ctx context.Context, id jobs.ID) (Result, bool, error) {
	return loadStatus(ctx, c.p.Store, c.bodies(), id, c.rules)
}

// loadStatus is LoadStatus judging by rules.
func loadStatus(ctx context.Context, store crdt.Reader, blocks records.BodyReader, id jobs.ID, rules finish.Rules) (Result, bool, error) {
	chosen, err := finish.ReadVerdictBy(ctx, store, blocks, id, nil, rules)
	if errors.Is(err, finish.ErrNoVerdict) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, fmt.Errorf("dapp: verdict of job %s: %w", id, err)
	}
	r, err := resultOf(chosen)
	if err != nil {
		return Result{}, false, fmt.Errorf("dapp: job %s: %w", id, err)
	}
	return r, true, nil
}

// resultOf is the Result of a chosen verdict, before its release.
func resultOf(chosen finish.ChosenVerdict) (Result, error) {
	out, err := cid.Decode(chosen.Record.Output)
	if err != nil {
		return Result{}, fmt.Errorf("verdict output: %w", err)
	}
	return Result{Verdict: chosen.Verdict, Culprits: chosen.Record.Culprits, Rounds: chosen.Record.Rounds, Output: out}, nil
}

// Wait waits for the job's verdict (WaitVerdict) and, with a chain, for
// its escrow to be released, which it returns in Result.Release. A failed
// job ends the wait with a *FailedError (ErrFailed), its refund in
// Result.Release when a failure settlement made it.
func (c *Client) Wait(ctx context.Context, id jobs.ID, every time.Duration) (Result, error) {
	r, err := c.WaitVerdict(ctx, id, every)
	if err != nil || c.p.Chain == nil {
		return r, err
	}
	rel, err := c.p.Chain.WaitReleased(ctx, c.p.Chain.KeyOf(common.Hash(id)))
	if err != nil {
		return r, fmt.Errorf("dapp: waiting for the escrow of job %s: %w", id, err)
	}
	if r, err = c.settled(ctx, id, r, rel, every); err != nil {
		return r, err
	}
	r.Release = rel
	c.log.Info("job settled", "job", id, "tx", rel.TxHash, "payees", len(rel.Payees), "refund", rel.Refund)
	return r, nil
}

// settled returns the verdict the escrow was released on: r when the
// release binds it (its output and records.OutcomeDigest), else the
// verdict record that the release binds (finish.SettledVerdict), waiting
// for it to reach this node. That is another finalizer's verdict, judged
// with records that had not reached this node when r was read: a later
// took record or commitment changes the rounds the settlement binds.
func (c *Client) settled(ctx context.Context, id jobs.ID, r Result, rel *escrow.Release, every time.Duration) (Result, error) {
	if rel.ResultRoot == (common.Hash{}) || records.ResultRoot(r.Output) == rel.ResultRoot &&
		records.OutcomeDigest(r.Verdict, records.VerdictRecord{Culprits: r.Culprits, Rounds: r.Rounds}) == rel.VerifierHash {
		return r, nil
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s, _, err := c.settledResult(ctx, id, rel)
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, finish.ErrNoVerdict) {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("dapp: job %s settled on a verdict not read here yet: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}

// onChain is one look at a job's escrow (Chain.Released); read is false
// without a chain or when the chain did not answer.
type onChain struct {
	rel  *escrow.Release
	job  escrow.Job
	read bool
}

func (c *Client) lookOnChain(ctx context.Context, id jobs.ID) onChain {
	if c.p.Chain == nil {
		return onChain{}
	}
	rel, j, err := c.p.Chain.Released(ctx, c.p.Chain.KeyOf(common.Hash(id)))
	return onChain{rel: rel, job: j, read: err == nil}
}

// settledOnChain returns the verdict that job id's escrow was released
// on (oc), once its record is here, while no verdict counts by this
// node's own records: a record that reached this node after the settlers
// judged (a late commitment that opens a dispute) makes it weigh their
// verdict otherwise, and the job is settled all the same. It says so.
func (c *Client) settledOnChain(ctx context.Context, id jobs.ID, oc onChain) (Result, bool, error) {
	if !oc.read || oc.job.State != escrow.JobSettled || oc.rel == nil || oc.rel.ResultRoot == (common.Hash{}) {
		return Result{}, false, nil
	}
	r, author, err := c.settledResult(ctx, id, oc.rel)
	if errors.Is(err, finish.ErrNoVerdict) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	c.log.Warn("job settled on a verdict that does not follow from this node's records", "job", id, "author", author, "tx", oc.rel.TxHash)
	return r, true, nil
}

// settledResult is the Result of the verdict record that rel binds
// (finish.SettledVerdict) and that record's author; an error wrapping
// finish.ErrNoVerdict while no such record is here.
func (c *Client) settledResult(ctx context.Context, id jobs.ID, rel *escrow.Release) (Result, string, error) {
	chosen, err := finish.SettledVerdict(ctx, c.p.Store, c.bodies(), id, rel.ResultRoot, rel.VerifierHash)
	if err == nil {
		var r Result
		if r, err = resultOf(chosen); err == nil {
			return r, chosen.Author, nil
		}
	}
	return Result{}, "", fmt.Errorf("dapp: settled verdict of job %s: %w", id, err)
}

// WaitVerdict polls the store until the job has a verdict, then stops
// announcing it: one that counts by this node's records or, with a
// chain, the one the job's escrow was released on (settledOnChain). A
// job that failed ends the wait with a *FailedError (ErrFailed;
// checkFailed).
func (c *Client) WaitVerdict(ctx context.Context, id jobs.ID, every time.Duration) (Result, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r, ok, err := c.Status(ctx, id)
		if (errors.Is(err, records.ErrBodyUnavailable) || errors.Is(err, escrow.ErrUnreachable)) && ctx.Err() == nil {
			// No peer served the verdict body in time, or the chain
			// did not say who is a member of the job; they may yet.
			c.log.Warn("verdict not readable yet, retrying", "job", id, "err", err)
			err = nil
		}
		if err != nil {
			return r, err
		}
		if ok {
			c.close(ctx, id, stateDone)
			return r, nil
		}
		if _, err := records.ReadAborted(ctx, c.p.Store, id); err == nil {
			c.checkAborted(ctx)
			return Result{}, fmt.Errorf("%w: %s", ErrAborted, id)
		}
		oc := c.lookOnChain(ctx, id)
		if r, ok, err := c.settledOnChain(ctx, id, oc); err != nil || ok {
			if ok {
				c.close(ctx, id, stateDone)
			}
			return r, err
		}
		if err := c.checkFailed(ctx, id, oc); err != nil {
			var fe *FailedError
			if !errors.As(err, &fe) {
				return Result{}, err
			}
			c.close(ctx, id, stateFailed)
			c.log.Warn("job failed", "job", id, "kind", fe.Failure.Kind, "reason", fe.Failure.Reason, "stderr", fe.Failure.Stderr)
			return Result{Release: fe.Release}, err
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-t.C:
		}
	}
}

// bodies is the client's block layer as a verdict body reader; nil
// without one.
func (c *Client) bodies() records.BodyReader {
	if c.p.Blocks == nil {
		return nil
	}
	return c.p.Blocks
}
