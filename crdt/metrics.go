package crdt

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/internal/metricset"
)

// metrics are the Store's Prometheus collectors.
type metrics struct {
	put           prometheus.Counter
	deleted       prometheus.Counter
	carried       prometheus.Counter
	rejected      *prometheus.CounterVec
	dropped       prometheus.Counter
	repairs       prometheus.Counter
	repairSeconds prometheus.Counter
	awaited       *prometheus.CounterVec
	announced     *prometheus.CounterVec
	greetings     *prometheus.CounterVec
	heads         prometheus.GaugeFunc
	height        prometheus.GaugeFunc

	set *metricset.Set
}

func newMetrics(reg prometheus.Registerer, heads, height func() float64) (*metrics, error) {
	m := &metrics{
		put: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_crdt_records_put_total",
			Help: "Records written by this node.",
		}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_crdt_records_deleted_total",
			Help: "Signed deletions written by this node.",
		}),
		carried: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_crdt_records_carried_total",
			Help: "Records taken in from the records that carried them (newer than what this node read under their keys).",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobmesh_crdt_records_rejected_total",
			Help: "Distinct stored records that failed verification, by reason.",
		}, []string{"reason"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_crdt_watch_dropped_total",
			Help: "Changes dropped because a watcher's buffer was full.",
		}),
		repairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_crdt_repairs_total",
			Help: "DAG repairs run (re-walks of a DAG marked dirty).",
		}),
		repairSeconds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_crdt_repair_seconds_total",
			Help: "Time spent in DAG repairs.",
		}),
		awaited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobmesh_crdt_dag_blocks_awaited_total",
			Help: "DAG blocks a walk needed that were not local, by how they came: with a broadcast within the wait, or from the network after it.",
		}, []string{"outcome"}),
		announced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobmesh_crdt_heads_announced_total",
			Help: "Heads this node's announcements carried (sent), and heads it left out (suppressed): announced by a replica within the re-announcement interval, or named as a parent by a delta it received.",
		}, []string{"outcome"}),
		greetings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobmesh_crdt_greetings_total",
			Help: "Re-announcements of this replica's latest heads to peers that joined the topic while it was new on it: sent, or skipped because this replica published every head itself after they joined.",
		}, []string{"outcome"}),
		heads: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobmesh_crdt_heads",
			Help: "Current number of Merkle-CRDT DAG heads.",
		}, heads),
		height: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobmesh_crdt_max_height",
			Help: "Current maximum Merkle-CRDT DAG height.",
		}, height),
	}
	for _, r := range reasons {
		m.rejected.WithLabelValues(r.label) // export zeros so that rates work
	}
	for _, o := range []string{"broadcast", "network"} {
		m.awaited.WithLabelValues(o)
	}
	for _, o := range []string{"sent", "suppressed"} {
		m.announced.WithLabelValues(o)
	}
	for _, o := range []string{"sent", "skipped"} {
		m.greetings.WithLabelValues(o)
	}
	set, err := metricset.Register(reg, m.put, m.deleted, m.carried, m.rejected, m.dropped, m.repairs, m.repairSeconds, m.awaited, m.announced, m.greetings, m.heads, m.height)
	if err != nil {
		return nil, fmt.Errorf("crdt: registering metrics: %w", err)
	}
	m.set = set
	return m, nil
}

func (m *metrics) unregister() { m.set.Unregister() }
