package jobstore

import (
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/metricset"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// metrics are the Manager's Prometheus collectors. The job stores' own
// crdt metrics are not registered: their names are one per node, and
// belong to the mesh store.
type metrics struct {
	open    prometheus.Gauge
	opened  prometheus.Counter
	dropped prometheus.Counter
	refused prometheus.Counter

	set *metricset.Set
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "jobmesh_jobstore_open",
			Help: "Job stores this node holds open.",
		}),
		opened: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_jobstore_opened_total",
			Help: "Job stores opened (a store reopened by Resume included).",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_jobstore_dropped_total",
			Help: "Job stores dropped once their job's retention had passed.",
		}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_jobstore_refused_total",
			Help: "Distinct records (job, key and author) a job store refused: a record of another job or of the mesh, one its author may not write, or one an aggregate may not carry.",
		}),
	}
	set, err := metricset.Register(reg, m.open, m.opened, m.dropped, m.refused)
	if err != nil {
		return nil, fmt.Errorf("jobstore: registering metrics: %w", err)
	}
	m.set = set
	return m, nil
}

func (m *metrics) unregister() { m.set.Unregister() }

// refusedMemory bounds the refusals remembered so that a record refused
// on every read is counted once; past it the memory is cleared, and a
// record refused again is counted again.
const refusedMemory = 4096

// refusal is one refused record, as a policy sees it.
type refusal struct {
	job    jobs.ID
	key    string
	author peer.ID
}

// refusals counts distinct refused records.
type refusals struct {
	mu   sync.Mutex
	seen map[refusal]struct{}
	n    prometheus.Counter
}

// count counts r if it is not remembered.
func (rs *refusals) count(r refusal) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.seen[r]; ok {
		return
	}
	if len(rs.seen) >= refusedMemory {
		clear(rs.seen)
	}
	rs.seen[r] = struct{}{}
	rs.n.Inc()
}

// policy is Policy(id, base) that counts what it refuses.
func (rs *refusals) policy(id jobs.ID, base crdt.AuthorPolicy) crdt.AuthorPolicy {
	return rs.counting(id, Policy(id, base))
}

// counting is p, a policy of job id's stores, counting what it refuses.
func (rs *refusals) counting(id jobs.ID, p crdt.AuthorPolicy) crdt.AuthorPolicy {
	return func(key string, author peer.ID) error {
		err := p(key, author)
		if err != nil {
			rs.count(refusal{job: id, key: key, author: author})
		}
		return err
	}
}

// carriage is records.Carriage that counts what it refuses: a record an
// aggregate of job id may not carry (another job's or MacroJob's, or of a
// kind it does not carry).
func (rs *refusals) carriage(id jobs.ID) *crdt.Carriage {
	c := records.Carriage()
	p := c.Policy
	c.Policy = func(carrier, inner string) error {
		err := p(carrier, inner)
		if err != nil {
			rs.count(refusal{job: id, key: carrier + " carries " + inner})
		}
		return err
	}
	return c
}
