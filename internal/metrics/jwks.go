package metrics

import "github.com/prometheus/client_golang/prometheus"

// newKeySets registers the counter of failed key set reads.
func newKeySets(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_jwks_failures_total",
		Help: "Failed reads of a JWKS URL (no answer, not 200, a redirect, not a key set, no usable key), by role (subscriber, publisher)."}, []string{"role"})
	reg.MustRegister(c)
	return c
}

// KeySetFailed counts a failed read of role's key set.
func (m *Metrics) KeySetFailed(role string) {
	m.keySets.WithLabelValues(role).Inc()
}
