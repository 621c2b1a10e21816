package processor

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	microjobs *prometheus.CounterVec
	seconds   prometheus.Histogram
	finalized prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		microjobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "microjobs_total",
			Help: "MicroJobs this processor ran and committed, by outcome.",
		}, []string{"outcome"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "microjob_seconds",
			Help: "Time to run and commit one MicroJob.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}),
		finalized: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "jobs_finalized_total",
			Help: "Verdicts this processor wrote.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.microjobs, m.seconds, m.finalized)
	}
	return m
}
