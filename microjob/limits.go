package microjob

import (
	"context"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/wasm"
)

// BlockLimits is the sandbox limits job info asks for (zero fields: the
// executor's own).
func BlockLimits(info *jobs.JobInfo) wasm.Limits {
	l := info.Limits
	return wasm.Limits{
		Timeout:          time.Duration(l.BlockTimeoutS) * time.Second,
		MemoryLimitBytes: uint64(l.MemoryMiB) << 20,
		MaxOutputBytes:   int64(l.OutputMiB) << 20,
	}
}

// WithJobLimits returns ctx under which a block of job info runs with the
// lower of the executor's limits and the job's (wasm.WithLimits).
func WithJobLimits(ctx context.Context, info *jobs.JobInfo) context.Context {
	if info.Limits.IsZero() {
		return ctx
	}
	return wasm.WithLimits(ctx, BlockLimits(info))
}

// Exceeds reports whether job info asks for more than an executor of cfg
// allows: such a processor does not take the job.
func Exceeds(info *jobs.JobInfo, cfg wasm.Config) bool {
	l := BlockLimits(info)
	return l.Timeout > cfg.Timeout || l.MemoryLimitBytes > cfg.MemoryLimitBytes || l.MaxOutputBytes > cfg.MaxOutputBytes
}
