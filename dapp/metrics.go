package dapp

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	submitted prometheus.Counter
	cancelled prometheus.Counter
	open      prometheus.GaugeFunc
	// candidates counts the holder records of open jobs this node acted
	// on, by outcome (hold.go).
	candidates *prometheus.CounterVec
	// revealed counts the check seeds this node published (reveal.go).
	revealed prometheus.Counter
}

// newMetrics registers the client's metrics with reg; nil: unregistered.
func newMetrics(reg prometheus.Registerer, open func() float64) (*metrics, error) {
	m := &metrics{
		submitted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_dapp_jobs_submitted_total", Help: "Jobs this node submitted.",
		}),
		cancelled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_dapp_jobs_cancelled_total", Help: "Jobs this node cancelled.",
		}),
		open: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "jobmesh_dapp_jobs_open", Help: "Jobs this node submitted and still announces.",
		}, open),
		candidates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "jobmesh_dapp_output_candidates_total",
			Help: "Holder records of this node's open jobs acted on, by outcome: held (the output fetched and pinned), and the refusals not-discloser (the holder has no disclosure in the job), limit (too many holders or candidates for the job), quota (the block store is over its quota) and failed (the fetch failed).",
		}, []string{"outcome"}),
		revealed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "jobmesh_dapp_check_seeds_revealed_total", Help: "Check seeds of this node's jobs it revealed once their regular MicroJobs were committed.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.submitted, m.cancelled, m.open, m.candidates, m.revealed} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
