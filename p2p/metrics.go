package p2p

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	bootstrapDials *prometheus.CounterVec
	rejected       *prometheus.CounterVec
	received       *prometheus.CounterVec
}

// newMetrics registers the package's metrics on reg; a nil reg keeps them
// unregistered (they still count, for tests).
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		bootstrapDials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "bootstrap_dials_total",
			Help: "Dials of bootstrap peers, by result.",
		}, []string{"result"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "messages_rejected_total",
			Help: "Pubsub messages rejected by a topic validator, by topic kind and reason.",
		}, []string{"topic", "reason"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "messages_accepted_total",
			Help: "Pubsub messages accepted by a topic validator, by topic kind.",
		}, []string{"topic"}),
	}
	if reg != nil {
		reg.MustRegister(m.bootstrapDials, m.rejected, m.received)
	}
	return m
}
