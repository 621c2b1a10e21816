package dapp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// ErrFailed is wrapped (by a *FailedError) when a job failed: its code
// fails the same way wherever it runs, or no processor joined it before
// its deadline. With a chain its escrow went back to the creator.
var ErrFailed = errors.New("dapp: job failed")

// FailedError is a failed job's error: why it failed, and with a chain
// the escrow's release that refunded it (nil after a refund).
type FailedError struct {
	Job     jobs.ID
	Failure apiv1.JobFailure
	Release *escrow.Release
}

func (e *FailedError) Error() string {
	msg := fmt.Sprintf("dapp: job %s failed: %s", e.Job, e.Failure.Reason)
	if e.Failure.Stderr != "" {
		msg += fmt.Sprintf(": stderr: %q", e.Failure.Stderr)
	}
	return msg
}

// Is makes errors.Is(err, ErrFailed) true.
func (e *FailedError) Is(target error) bool { return target == ErrFailed }

// FailureText is a failure's Reason: its kind in words.
func FailureText(f records.Failure) string {
	switch f.Kind {
	case records.FailInvalidModule:
		return "the job's code is not a runnable WebAssembly module (invalid-module)"
	case records.FailTrap:
		return "the job's code trapped (trap)"
	case records.FailExit:
		return fmt.Sprintf("the job's code exited with code %d (exit)", f.ExitCode)
	case records.FailMemoryLimit:
		return "the job's code ran over the memory limit (memory-limit)"
	case records.FailOutputTooLarge:
		return "the job's code wrote more output than the limit (output-too-large)"
	case records.FailTimeout:
		return "the job's code ran over the time limit of a block (timeout)"
	case records.FailNoProcessor:
		return "no processor took the job before its deadline (no-eligible-processor)"
	}
	return f.Kind
}

// ReadFailure reads the failure of job id that at least f processors
// report alike (AgreedFailure); ok is false while there is none.
func ReadFailure(ctx context.Context, store crdt.Reader, id jobs.ID, f int) (apiv1.JobFailure, bool, error) {
	reports, err := records.ReadFailures(ctx, store, id)
	if err != nil {
		return apiv1.JobFailure{}, false, fmt.Errorf("dapp: failure reports of job %s: %w", id, err)
	}
	fail, ok := AgreedFailure(reports, f)
	return fail, ok, nil
}

// AgreedFailure is the failure at least f of reports tell alike
// (finish.FailureAgreed). Reports alone are the mesh's word; with a chain
// the failure settlement is the final one (the processors sign it only
// after their own runs failed alike).
func AgreedFailure(reports []records.Reported, f int) (apiv1.JobFailure, bool) {
	fj, ok := finish.FailureAgreed(reports, f)
	if !ok {
		return apiv1.JobFailure{}, false
	}
	return apiv1.JobFailure{
		Kind: fj.Failure.Kind, Micro: fj.Micro.String(), ExitCode: fj.Failure.ExitCode,
		Reason: FailureText(fj.Failure), Stderr: fj.Stderr, Reports: fj.Reporters,
	}, true
}

// NoProcessorFailure is the failure of a job no processor joined before
// its deadline.
func NoProcessorFailure() apiv1.JobFailure {
	return apiv1.JobFailure{Kind: records.FailNoProcessor, Reason: FailureText(records.Failure{Kind: records.FailNoProcessor}), Reports: []string{}}
}

// failReports is the F of the client's failure reading.
func (c *Client) failReports() int {
	if c.p.FailReports > 0 {
		return c.p.FailReports
	}
	return 2
}

// checkFailed returns a *FailedError when job id failed: without a chain,
// when enough processors report the same failure; with one, once the
// escrow went back to the creator by a failure settlement, or by a
// refund (taken here for a job of this client past its deadline) while
// no processor joined it. oc is what the poll read of the job's escrow.
func (c *Client) checkFailed(ctx context.Context, id jobs.ID, oc onChain) error {
	f, failed, err := ReadFailure(ctx, c.p.Store, id, c.failReports())
	if err != nil {
		return err
	}
	if c.p.Chain == nil {
		if failed {
			return &FailedError{Job: id, Failure: f}
		}
		return nil
	}
	if !oc.read {
		return nil // the chain is read again at the next poll
	}
	rel, j := oc.rel, oc.job
	switch {
	case j.State == escrow.JobSettled && rel != nil && rel.ResultRoot == (common.Hash{}):
		if !failed {
			return nil // the reports are still on their way here
		}
		return &FailedError{Job: id, Failure: f, Release: rel}
	case j.State == escrow.JobRefunded && j.Members == 0:
		return &FailedError{Job: id, Failure: NoProcessorFailure()}
	case j.State == escrow.JobFunded && j.Members == 0 && c.mineJob(id) && c.pastDeadline(ctx, j):
		if _, err := c.p.Chain.Refund(ctx, c.p.Chain.KeyOf(common.Hash(id))); err != nil {
			c.log.Warn("refunding a job no processor joined", "job", id, "err", err)
			return nil
		}
		c.log.Info("job refunded: no processor joined it before its deadline", "job", id, "amount", j.Amount)
		return &FailedError{Job: id, Failure: NoProcessorFailure()}
	}
	return nil
}

// pastDeadline reports whether the chain's clock is past j's deadline.
func (c *Client) pastDeadline(ctx context.Context, j escrow.Job) bool {
	now, err := c.p.Chain.Now(ctx)
	return err == nil && now.After(j.Deadline) && !j.Deadline.Equal(time.Time{})
}

// mineJob reports whether this client submitted job id.
func (c *Client) mineJob(id jobs.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mine[id] != nil
}
