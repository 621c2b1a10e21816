package dapp

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	submitted prometheus.Counter
	cancelled prometheus.Counter
	open      prometheus.GaugeFunc
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
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.submitted, m.cancelled, m.open} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
