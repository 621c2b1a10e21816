package processor

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/jobmesh/jobmesh/macrojob"
)

type metrics struct {
	microjobs *prometheus.CounterVec
	seconds   prometheus.Histogram
	finalized prometheus.Counter
	rooms     *macrojob.Metrics // queue events of every room this processor joins
	aborted   prometheus.Counter
	live      prometheus.Gauge
	kicked    prometheus.Gauge
	// refused counts verdict, dispute, check and redo records refused,
	// by type and reason; signRefusals the settlements not signed.
	refused      *prometheus.CounterVec
	signRefusals *prometheus.CounterVec
	// lonelyVerdicts counts verdicts written after HoldWait with no second
	// node holding the output.
	lonelyVerdicts prometheus.Counter
	// failureReports counts the failure reports this processor wrote, by
	// kind; failedJobs the jobs it found failed (finish.JobFailed).
	failureReports *prometheus.CounterVec
	failedJobs     prometheus.Counter
	// jobChannel counts the Job channel messages read from other
	// processors, by kind (jobChannelKind).
	jobChannel *prometheus.CounterVec
	// checks counts the jobs whose checks this processor drew, by the
	// seed's source; "redrawn" a lapsed job drawn again from a later
	// reveal.
	checks *prometheus.CounterVec
	// aggregates counts the MacroJob aggregates this processor wrote, by
	// type (aggregate.go).
	aggregates *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		aggregates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "aggregates_total",
			Help: "MacroJob aggregates this processor wrote to a job's store from its room store, by type (committed, disclosed).",
		}, []string{"type"}),
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
		aborted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "jobs_aborted_total",
			Help: "records.JobAborted records this processor wrote because the open-job queue was over its cap.",
		}),
		live: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "live_processors",
			Help: "Processors with a fresh advertisement in the latest dispatch view.",
		}),
		kicked: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "kicked_processors",
			Help: "Live processors the QoS rules have kicked out, in the latest dispatch view.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "records_refused_total",
			Help: "Verdict, dispute, check, redo and reveal records refused, each once, by type and reason (author, culprit, content, disagrees, output; for reveals: mismatch, author, early, malformed).",
		}, []string{"type", "reason"}),
		signRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "sign_refusals_total",
			Help: "Settlements this processor did not sign because the verdict did not follow from its records, once per job, reason and record, by reason.",
		}, []string{"reason"}),
		lonelyVerdicts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "verdicts_single_holder_total",
			Help: "Verdicts this processor wrote once HoldWait was over with no second node holding the job's output.",
		}),
		failureReports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "failure_reports_total",
			Help: "Failure reports this processor wrote (its runs of a job's code failed deterministically), by kind.",
		}, []string{"kind"}),
		failedJobs: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "jobs_failed_total",
			Help: "Jobs this processor found failed: enough processors reported the failure its own run met.",
		}),
		jobChannel: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "job_channel_messages_total",
			Help: "Job channel messages read from other processors, by kind (room, claim, rooms, progress, finalizing).",
		}, []string{"kind"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "checks_drawn_total",
			Help: "Jobs whose verifiers this processor drew, by the check seed's source (revealed, lapsed: the DApp did not reveal in time, public: a group job, redrawn: a lapsed job drawn again from a later reveal).",
		}, []string{"source"}),
	}
	if reg != nil {
		reg.MustRegister(m.microjobs, m.seconds, m.finalized, m.aborted, m.live, m.kicked, m.refused, m.signRefusals,
			m.lonelyVerdicts, m.failureReports, m.failedJobs, m.jobChannel, m.checks, m.aggregates)
	}
	rooms, err := macrojob.NewMetrics(reg)
	if err != nil {
		panic(err) // as MustRegister above: the name is taken by another collector
	}
	m.rooms = rooms
	return m
}

// MicroJobCounts reports the MicroJobs this processor ran and committed,
// and the runs that failed: its jobmesh_processor_microjobs_total.
func (w *Worker) MicroJobCounts() (committed, failed uint64) {
	return counterValue(w.m.microjobs.WithLabelValues("ok")), counterValue(w.m.microjobs.WithLabelValues("failed"))
}

func counterValue(c prometheus.Counter) uint64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return uint64(m.GetCounter().GetValue())
}
