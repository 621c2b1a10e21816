package wasm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunLimits: a run under WithLimits gets the lower of the executor's
// limits and the job's, each on its own; limits above the executor's
// change nothing.
func TestRunLimits(t *testing.T) {
	e := newTestExecutor(t, nil) // 4 MiB, 5 s, 1 MiB of output
	ctx := context.Background()
	lower := WithLimits(ctx, Limits{MaxOutputBytes: 10})
	if _, err := e.Run(lower, echoModule(), []byte("0123456789a")); !errors.Is(err, ErrOutputTooLarge) || !strings.Contains(err.Error(), "more than 10 bytes") {
		t.Fatalf("11 bytes under a job's 10-byte cap: %v", err)
	}
	higher := WithLimits(ctx, Limits{MaxOutputBytes: 1 << 30, Timeout: time.Hour, MemoryLimitBytes: 1 << 32})
	if got := e.cfg.runLimits(higher); got != e.cfg.runLimits(ctx) {
		t.Fatalf("limits above the executor's: %+v", got)
	}
	if out, err := e.Run(higher, echoModule(), []byte("0123456789a")); err != nil || string(out) != "0123456789a" {
		t.Fatalf("under limits above the executor's: %q, %v", out, err)
	}
	loop := testModule{memMin: 1, body: []byte{opLoop, blockEmpty, opBr, 0, opEnd}}.bytes()
	if _, err := e.Run(WithLimits(ctx, Limits{Timeout: 100 * time.Millisecond}), loop, nil); !errors.Is(err, ErrTimeout) ||
		!strings.Contains(err.Error(), "after 100ms") {
		t.Fatalf("a loop under a job's 100 ms: %v", err)
	}
	grow := testModule{memMin: 1, body: cat(i32c(16), []byte{opMemoryGrow, 0}, i32c(-1), []byte{opI32Eq, opIf, blockEmpty, opUnreachable, opEnd})}.bytes()
	if _, err := e.Run(ctx, grow, nil); err != nil {
		t.Fatalf("growing to 17 pages under 4 MiB: %v", err)
	}
	if _, err := e.Run(WithLimits(ctx, Limits{MemoryLimitBytes: 8 * PageSize}), grow, nil); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("growing to 17 pages under a job's 8: %v", err)
	}
}
