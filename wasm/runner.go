package wasm

import (
	"context"
	"errors"
	"fmt"
)

// Runner runs one block of a job through the job's code and returns the
// block's result. Implementations must be deterministic: the same code and
// input give the same output on every processor, because verification
// compares result hashes across processors. They must be safe for concurrent
// use, and a failing run must not affect later runs.
type Runner interface {
	Run(ctx context.Context, code, input []byte) ([]byte, error)
}

// Preparer is a Runner that can compile a job's code before its first run,
// so that the first block does not wait for the compiler.
type Preparer interface {
	Prepare(ctx context.Context, code []byte) error
}

var (
	_ Runner   = (*Executor)(nil)
	_ Preparer = (*Executor)(nil)
)

// Errors returned by Run, matched with errors.Is.
var (
	// ErrTrap: the module hit a WebAssembly trap (unreachable, out-of-bounds
	// access, division by zero, stack exhaustion, ...).
	ErrTrap = errors.New("wasm: trap")
	// ErrTimeout: the run exceeded Config.Timeout.
	ErrTimeout = errors.New("wasm: run timed out")
	// ErrMemoryLimit: the module declared or tried to grow its memory past
	// Config.MemoryLimitBytes.
	ErrMemoryLimit = errors.New("wasm: memory limit exceeded")
	// ErrOutputTooLarge: the module wrote more than Config.MaxOutputBytes to
	// stdout.
	ErrOutputTooLarge = errors.New("wasm: output too large")
	// ErrExit: the module exited with a non-zero code; the error is an
	// *ExitError holding the code.
	ErrExit = errors.New("wasm: non-zero exit code")
	// ErrInvalidModule: the code is not a runnable WASI command module (bad
	// binary, unknown imports, no _start, larger than Config.MaxModuleBytes).
	ErrInvalidModule = errors.New("wasm: invalid module")
	// ErrCanceled: the caller's context ended before the run finished.
	ErrCanceled = errors.New("wasm: run canceled")
	// ErrClosed: the executor has been closed.
	ErrClosed = errors.New("wasm: executor closed")
)

// ExitError is returned when a module exits with a non-zero code. It matches
// ErrExit with errors.Is.
type ExitError struct {
	// Code is the exit code passed to proc_exit.
	Code uint32
	// Stderr is the start of what the module wrote to stderr (bounded by
	// Config.MaxStderrBytes).
	Stderr string
}

func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("wasm: exit code %d", e.Code)
	}
	return fmt.Sprintf("wasm: exit code %d: stderr: %q", e.Code, e.Stderr)
}

// Unwrap makes errors.Is(err, ErrExit) true.
func (e *ExitError) Unwrap() error { return ErrExit }

// stderrError is a failed run's error with the start of what the module
// wrote to stderr (traps and refused memory growth).
type stderrError struct {
	err    error
	stderr string
}

func (e *stderrError) Error() string { return fmt.Sprintf("%v: stderr: %q", e.err, e.stderr) }

func (e *stderrError) Unwrap() error { return e.err }

// withStderr attaches stderr to err; err alone when stderr is empty.
func withStderr(err error, stderr string) error {
	if stderr == "" {
		return err
	}
	return &stderrError{err: err, stderr: stderr}
}

// Stderr returns the start of what the module wrote to stderr before the
// run failed with err (bounded by Config.MaxStderrBytes): an exit's, a
// trap's or a refused memory growth's; "" for other errors.
func Stderr(err error) string {
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Stderr
	}
	var se *stderrError
	if errors.As(err, &se) {
		return se.stderr
	}
	return ""
}
