package p2p

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

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

// quietHandler passes on only records at or above min: libraries log
// transient conditions (such as a DHT that has no peers yet at start-up) as
// warnings that are noise to a node operator.
type quietHandler struct {
	slog.Handler
	min slog.Level
}

func (q quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{q.Handler.WithAttrs(as), q.min}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{q.Handler.WithGroup(name), q.min}
}
