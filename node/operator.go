package node

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/cputime"
	"github.com/jobmesh/jobmesh/internal/logring"
)

// warningsKept is how many of its latest WARN and ERROR log records a
// node keeps for the operator view.
const warningsKept = 100

// Operator reports what this node does and costs: the MicroJobs it ran,
// its wallet's earnings as last read from the chain, its CPU time and
// memory, and its latest warnings.
func (n *Node) Operator(context.Context) (apiv1.Operator, error) {
	op := apiv1.Operator{
		Role:          string(n.Role),
		UptimeSeconds: time.Since(n.started).Seconds(),
		CPUSeconds:    -1,
		CPUs:          runtime.NumCPU(),
		Goroutines:    runtime.NumGoroutine(),
		Warnings:      []apiv1.LogRecord{},
	}
	if n.Worker != nil {
		op.MicroJobsCommitted, op.MicroJobsFailed = n.Worker.MicroJobCounts()
	}
	if n.Earnings != nil {
		if e, at, ok := n.Earnings.Last(); ok {
			op.Earnings = &apiv1.Earnings{
				Wallet:      strings.ToLower(n.Escrow.From().Hex()),
				CreditedWei: e.Credited().String(), WithdrawnWei: e.Withdrawn.String(), CreditWei: e.Credit.String(),
				ReadAt: at.UTC(),
			}
		}
	}
	if d := cputime.Process(); d >= 0 {
		op.CPUSeconds = d.Seconds()
	}
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(samples)
	if samples[0].Value.Kind() == metrics.KindUint64 {
		op.MemoryBytes = samples[0].Value.Uint64()
	}
	if samples[1].Value.Kind() == metrics.KindUint64 {
		op.HeapBytes = samples[1].Value.Uint64()
	}
	if n.warnings != nil {
		for _, r := range n.warnings.Records() {
			op.Warnings = append(op.Warnings, apiv1.LogRecord(r))
		}
	}
	return op, nil
}

// keepWarnings returns log, whose records at WARN and above are also kept
// in the returned ring for the operator view.
func keepWarnings(log *slog.Logger) (*slog.Logger, *logring.Ring) {
	ring := logring.New(warningsKept)
	return slog.New(ring.Handler(log.Handler())), ring
}
