package p2p

import (
	"context"
	"log/slog"
	"strings"

	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	bootstrapDials *prometheus.CounterVec
	rejected       *prometheus.CounterVec
	received       *prometheus.CounterVec
	// traffic counts pubsub messages by topic kind and event (trace.go).
	traffic *prometheus.CounterVec
	// refused counts peers whose connections were closed, by reason.
	refused *prometheus.CounterVec
	// dhtRequests counts the DHT requests this node answered, by type.
	dhtRequests *prometheus.CounterVec
	// faultDropped counts messages the DropInbound fault ignored.
	faultDropped prometheus.Counter
}

// newMetrics makes the package's metrics; register adds them to a
// registry.
func newMetrics() *metrics {
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
		traffic: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "pubsub_messages_total",
			Help: "Pubsub messages by topic kind (crdt: the mesh store, jobcrdt: job stores, jobs, job, macrojob, roomcrdt: room stores, other) and event: delivered (accepted, handed to subscribers), duplicate (a copy already seen, dropped), sent (in an RPC to a peer).",
		}, []string{"topic", "event"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "peers_refused_total",
			Help: "Connections closed because of what the peer is, by reason (layout: another mesh layout version).",
		}, []string{"reason"}),
		dhtRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "dht_requests_total",
			Help: "DHT requests this node answered, by message type (find_node, get_providers, add_provider, get_value, put_value, ping, other).",
		}, []string{"type"}),
		faultDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "p2p", Name: "fault_dropped_total",
			Help: "Pubsub messages ignored by the DropInbound fault injection (tests only).",
		}),
	}
	return m
}

// register adds the metrics to reg; a nil reg keeps them unregistered
// (they still count, for tests). The fault counter is registered only
// when the fault is on.
func (m *metrics) register(reg prometheus.Registerer, fault bool) {
	if reg == nil {
		return
	}
	reg.MustRegister(m.bootstrapDials, m.rejected, m.received, m.traffic, m.refused, m.dhtRequests)
	if fault {
		reg.MustRegister(m.faultDropped)
	}
}

// dhtRequestType is the type label of a DHT request: the message type
// in lower case, or "other" for a value this version does not know (the
// label's values stay bounded whatever a peer sends).
func dhtRequestType(t dhtpb.Message_MessageType) string {
	switch t {
	case dhtpb.Message_PUT_VALUE, dhtpb.Message_GET_VALUE, dhtpb.Message_ADD_PROVIDER,
		dhtpb.Message_GET_PROVIDERS, dhtpb.Message_FIND_NODE, dhtpb.Message_PING:
		return strings.ToLower(t.String())
	}
	return "other"
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
