package main

import (
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/apiv1"
)

// Exit codes. A script tells how a followed job ended (job wait, job
// submit --wait) by the code alone; 1 is every error that is not about
// the job (the node unreachable, an HTTP error, a refused module).
const (
	exitOK        = 0 // success; for a followed job, verified
	exitError     = 1 // any other error
	exitUsage     = 2 // a bad flag or argument, named in the message
	exitFailed    = 3 // the job failed (state failed), or ended without every block verified
	exitCancelled = 4 // the job was cancelled by its creator
	exitTimedOut  = 5 // the job's deadline passed and its escrow was refunded
	exitUndecided = 6 // the job's deadline refunded it while blocks stayed undecided
)

// exitCodesHelp lists the codes for the help of the commands that follow a
// job; the README carries the same table.
const exitCodesHelp = `Exit codes:
  0  verified (settled, or verified on a mesh without a chain)
  1  an error that is not about the job (node unreachable, HTTP error, ...)
  2  a bad flag or argument
  3  failed: the job's code cannot run (state failed: the reason and stderr
     are printed), or the job ended without every block verified
  4  cancelled by its creator
  5  timed out: the deadline passed and the escrow was refunded
  6  undecided: the deadline refunded the job while blocks stayed undecided`

// codedError is an error that ends jobnode with its own exit code.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// exitCode is the process exit code for err, the error a command returned.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if ce, ok := errors.AsType[*codedError](err); ok {
		return ce.code
	}
	return exitError
}

// flagError is a bad value of flag --name, said by the flag's name.
func flagError(name, format string, args ...any) error {
	return &codedError{exitUsage, fmt.Errorf("--%s: %s", name, fmt.Sprintf(format, args...))}
}

// usageError marks err as a usage error.
func usageError(err error) error { return &codedError{exitUsage, err} }

// jobEnd is the error (nil for verified) that ends a command which followed
// job j to its end, with the exit code that tells how it ended.
func jobEnd(j apiv1.Job) error {
	code, how := exitFailed, fmt.Sprintf("ended %s", j.State)
	switch {
	case (j.State == apiv1.JobSettled || j.State == apiv1.JobVerified) && j.Verified:
		return nil
	case j.State == apiv1.JobSettled || j.State == apiv1.JobVerified:
		how = "ended without every block verified"
	case j.State == apiv1.JobFailed && j.Failure != nil:
		how = "failed: " + j.Failure.Reason
		if j.Failure.Stderr != "" {
			how += fmt.Sprintf("; stderr: %q", j.Failure.Stderr)
		}
	case j.State == apiv1.JobCancelled:
		code, how = exitCancelled, "was cancelled"
	case j.State == apiv1.JobRefunded && len(j.Undecided) > 0:
		code, how = exitUndecided, "was refunded at its deadline with undecided blocks"
	case j.State == apiv1.JobRefunded:
		code, how = exitTimedOut, "timed out: its deadline passed and the escrow was refunded"
	}
	return &codedError{code, fmt.Errorf("job %s %s", j.ID, how)}
}
