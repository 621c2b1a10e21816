package escrow

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts what the client does on chain.
type metrics struct {
	txs     *prometheus.CounterVec
	gasUsed *prometheus.CounterVec
	reads   *prometheus.CounterVec
	retries prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		txs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "escrow", Name: "transactions_total",
			Help: "Escrow transactions by method and outcome (ok, reverted, unreachable, error).",
		}, []string{"method", "outcome"}),
		gasUsed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "escrow", Name: "gas_used_total",
			Help: "Gas used by mined escrow transactions, by method.",
		}, []string{"method"}),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "escrow", Name: "reads_total",
			Help: "Read-only chain requests (contract calls by method, event log queries as \"logs\") by outcome (ok, error).",
		}, []string{"method", "outcome"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "escrow", Name: "rpc_retries_total",
			Help: "Chain requests retried because the chain could not be reached.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	// Several clients in one process share one set of counters.
	var err error
	if m.txs, err = register(reg, m.txs); err != nil {
		return nil, err
	}
	if m.gasUsed, err = register(reg, m.gasUsed); err != nil {
		return nil, err
	}
	if m.reads, err = register(reg, m.reads); err != nil {
		return nil, err
	}
	if m.retries, err = register(reg, m.retries); err != nil {
		return nil, err
	}
	return m, nil
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

func (m *metrics) tx(method, outcome string) { m.txs.WithLabelValues(method, outcome).Inc() }

func (m *metrics) read(method string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.reads.WithLabelValues(method, outcome).Inc()
}

func (m *metrics) gas(method string, gas uint64) {
	m.gasUsed.WithLabelValues(method).Add(float64(gas))
}
