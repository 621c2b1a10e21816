package macrojob

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the queues of one node's rooms do: the Stats of
// every room, summed. Share one Metrics between a node's rooms.
type Metrics struct {
	events *prometheus.CounterVec
	// heard counts the messages read from the rooms' other members, by
	// kind (request, snapshot, result).
	heard *prometheus.CounterVec
}

// NewMetrics registers the queue counters with reg (nil: kept local).
// Registering twice on one registry returns the counters already there.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	events := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "jobmesh", Subsystem: "macrojob", Name: "queue_events_total",
		Help: "MicroJob queue events on this node: handoff (ownership passed to a requester), takeover (successor rule), stepdown, lock (a MicroJob locked for this node), reopen (an expired lock reopened), unsent (a snapshot not published because the room had no other member).",
	}, []string{"event"})
	for _, e := range []string{"handoff", "takeover", "stepdown", "lock", "reopen", "unsent"} {
		events.WithLabelValues(e) // export zeros so that rates work
	}
	heard := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "jobmesh", Subsystem: "macrojob", Name: "messages_total",
		Help: "Room messages this node read from the rooms' other members, by kind (request, snapshot, result).",
	}, []string{"kind"})
	for _, k := range []Kind{KindRequest, KindSnapshot, KindResult} {
		heard.WithLabelValues(k.String())
	}
	var err error
	if events, err = register(reg, events); err != nil {
		return nil, err
	}
	if heard, err = register(reg, heard); err != nil {
		return nil, err
	}
	return &Metrics{events: events, heard: heard}, nil
}

// register registers c with reg, or returns the collector registered
// there under its name before.
func register(reg prometheus.Registerer, c *prometheus.CounterVec) (*prometheus.CounterVec, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		return nil, err
	}
	existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
	if !ok {
		return nil, err
	}
	return existing, nil
}

// read counts a message of kind k read from another member.
func (m *Metrics) read(k Kind) {
	if m != nil {
		m.heard.WithLabelValues(k.String()).Inc()
	}
}

// unsent counts n snapshots left unpublished (Room.publish).
func (m *Metrics) unsent(n int) {
	if m != nil {
		m.events.WithLabelValues("unsent").Add(float64(n))
	}
}

// count adds what a queue did between two of its Stats.
func (m *Metrics) count(prev, cur Stats) {
	if m == nil {
		return
	}
	add := func(event string, a, b uint64) {
		if b > a {
			m.events.WithLabelValues(event).Add(float64(b - a))
		}
	}
	add("handoff", prev.Handoffs, cur.Handoffs)
	add("takeover", prev.Takeovers, cur.Takeovers)
	add("stepdown", prev.StepDowns, cur.StepDowns)
	add("lock", prev.Locks, cur.Locks)
	add("reopen", prev.Reopened, cur.Reopened)
}
