package jobs

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrInvalidLimits is wrapped when a job's per-block limits are out of
// range.
var ErrInvalidLimits = errors.New("jobs: invalid per-block limits")

// Bounds of the per-block limits a job may ask for.
const (
	MaxBlockTimeoutS  = 3600 // 1 h
	MaxBlockMemoryMiB = 4096 // a 32-bit WebAssembly memory
	MaxBlockOutputMiB = 4096
)

// Limits are per-block sandbox limits a job asks for, where it needs less
// than the processors allow: a processor runs each block under the lower
// of its own limit and the job's, and does not take a job asking for more
// than its own. Zero fields ask for nothing: the processor's limit holds.
// A JobInfo without limits encodes as it did before they existed, so its
// ID is unchanged.
type Limits struct {
	BlockTimeoutS uint32 // seconds one block's run may take; 0: the processor's
	MemoryMiB     uint32 // memory of one run, MiB; 0: the processor's
	OutputMiB     uint32 // stdout of one run, MiB; 0: the processor's
}

// IsZero reports whether l asks for nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

func (j *JobInfo) validateLimits(add func(field string, sentinel error, format string, args ...any)) {
	l := j.Limits
	if l.BlockTimeoutS > MaxBlockTimeoutS {
		add("limits.block_timeout_s", ErrInvalidLimits, "%d not in 0..%d", l.BlockTimeoutS, MaxBlockTimeoutS)
	}
	if l.MemoryMiB > MaxBlockMemoryMiB {
		add("limits.memory_mib", ErrInvalidLimits, "%d not in 0..%d", l.MemoryMiB, MaxBlockMemoryMiB)
	}
	if l.OutputMiB > MaxBlockOutputMiB {
		add("limits.output_mib", ErrInvalidLimits, "%d not in 0..%d", l.OutputMiB, MaxBlockOutputMiB)
	}
}

// appendLimits appends the "limits" member when l asks for anything.
func appendLimits(b []byte, l Limits) []byte {
	if l.IsZero() {
		return b
	}
	b = append(b, `,"limits":{"block_timeout_s":`...)
	b = strconv.AppendUint(b, uint64(l.BlockTimeoutS), 10)
	b = append(b, `,"memory_mib":`...)
	b = strconv.AppendUint(b, uint64(l.MemoryMiB), 10)
	b = append(b, `,"output_mib":`...)
	b = strconv.AppendUint(b, uint64(l.OutputMiB), 10)
	return append(b, '}')
}

// wireLimits mirrors the "limits" member for decoding.
type wireLimits struct {
	BlockTimeoutS uint32 `json:"block_timeout_s"`
	MemoryMiB     uint32 `json:"memory_mib"`
	OutputMiB     uint32 `json:"output_mib"`
}

func (w *wireLimits) limits() Limits {
	if w == nil {
		return Limits{}
	}
	return Limits{BlockTimeoutS: w.BlockTimeoutS, MemoryMiB: w.MemoryMiB, OutputMiB: w.OutputMiB}
}

// String writes l for messages.
func (l Limits) String() string {
	return fmt.Sprintf("block timeout %ds, memory %d MiB, output %d MiB (0: the processor's)", l.BlockTimeoutS, l.MemoryMiB, l.OutputMiB)
}
