// Package metricset registers a set of Prometheus collectors as one: all
// of them or none, and unregisters them together.
package metricset

import "github.com/prometheus/client_golang/prometheus"

// Set is collectors registered together.
type Set struct {
	reg prometheus.Registerer
	all []prometheus.Collector
}

// Register registers every collector with reg, or, on the first error,
// unregisters those it did and returns the error. A nil reg registers
// nothing.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) (*Set, error) {
	s := &Set{reg: reg, all: cs}
	if reg == nil {
		return s, nil
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return nil, err
		}
	}
	return s, nil
}

// Unregister removes every collector of the set from its registerer.
func (s *Set) Unregister() {
	if s.reg == nil {
		return
	}
	for _, c := range s.all {
		s.reg.Unregister(c)
	}
}
