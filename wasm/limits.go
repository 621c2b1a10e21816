package wasm

import (
	"context"
	"time"
)

// Limits are per-run limits below an Executor's own (Config): a job that
// needs less asks for them. Zero fields leave the Executor's limit.
type Limits struct {
	Timeout          time.Duration
	MemoryLimitBytes uint64
	MaxOutputBytes   int64
}

type limitsKey struct{}

// WithLimits returns ctx carrying l: an Executor's Run under it applies
// the lower of each of its own limits and l's.
func WithLimits(ctx context.Context, l Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l)
}

// runLimits are the executor's limits lowered by those ctx carries.
func (c Config) runLimits(ctx context.Context) Limits {
	own := Limits{Timeout: c.Timeout, MemoryLimitBytes: uint64(c.memoryLimitPages()) * PageSize, MaxOutputBytes: c.MaxOutputBytes}
	l, ok := ctx.Value(limitsKey{}).(Limits)
	if !ok {
		return own
	}
	if l.Timeout > 0 {
		own.Timeout = min(own.Timeout, l.Timeout)
	}
	if l.MemoryLimitBytes > 0 {
		own.MemoryLimitBytes = min(own.MemoryLimitBytes, l.MemoryLimitBytes)
	}
	if l.MaxOutputBytes > 0 {
		own.MaxOutputBytes = min(own.MaxOutputBytes, l.MaxOutputBytes)
	}
	return own
}
