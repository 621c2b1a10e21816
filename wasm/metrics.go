package wasm

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Run outcomes, the values of the "outcome" label.
const (
	outcomeOK             = "ok"
	outcomeTrap           = "trap"
	outcomeTimeout        = "timeout"
	outcomeMemoryLimit    = "memory_limit"
	outcomeOutputTooLarge = "output_too_large"
	outcomeExit           = "exit"
	outcomeInvalidModule  = "invalid_module"
	outcomeCanceled       = "canceled"
	outcomeOther          = "other"
)

type metrics struct {
	runs        *prometheus.CounterVec
	duration    prometheus.Histogram
	cacheHits   prometheus.Counter
	cacheMisses prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "wasm", Name: "runs_total",
			Help: "WebAssembly runs by outcome.",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "jobmesh", Subsystem: "wasm", Name: "run_duration_seconds",
			Help:    "Duration of one run, compilation included.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "wasm", Name: "compile_cache_hits_total",
			Help: "Runs whose compiled module was already in the in-memory cache.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "wasm", Name: "compile_cache_misses_total",
			Help: "Runs that had to compile (or load from disk) their module.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.runs, m.duration, m.cacheHits, m.cacheMisses} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// outcome names the metric label for a Run error.
func outcome(err error) string {
	switch {
	case err == nil:
		return outcomeOK
	case errors.Is(err, ErrTrap):
		return outcomeTrap
	case errors.Is(err, ErrTimeout):
		return outcomeTimeout
	case errors.Is(err, ErrMemoryLimit):
		return outcomeMemoryLimit
	case errors.Is(err, ErrOutputTooLarge):
		return outcomeOutputTooLarge
	case errors.Is(err, ErrExit):
		return outcomeExit
	case errors.Is(err, ErrInvalidModule):
		return outcomeInvalidModule
	case errors.Is(err, ErrCanceled):
		return outcomeCanceled
	}
	return outcomeOther
}
