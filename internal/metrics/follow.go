package metrics

import "github.com/prometheus/client_golang/prometheus"

// follow holds the counters of the follower engine (hub/follow).
type follow struct {
	polls      *prometheus.CounterVec
	bytes      *prometheus.CounterVec
	leniencies *prometheus.CounterVec
}

func newFollow(reg *prometheus.Registry) follow {
	f := follow{
		polls:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_follow_polls_total", Help: "Polls of followed Sources, by channel and outcome (ok, error)."}, []string{"channel", "outcome"}),
		bytes:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_follow_bytes_total", Help: "Body bytes fetched from followed Sources, by channel."}, []string{"channel"}),
		leniencies: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_leniencies_total", Help: "Rules broken by documents of followed Sources and worked around in lenient mode, by channel and rule."}, []string{"channel", "rule"}),
	}
	reg.MustRegister(f.polls, f.bytes, f.leniencies)
	return f
}

// Polled counts a poll of a followed Source (follow.Observer).
func (m *Metrics) Polled(channel, outcome string) {
	m.follow.polls.WithLabelValues(channel, outcome).Inc()
}

// Fetched counts the body bytes a poll fetched (follow.Observer).
func (m *Metrics) Fetched(channel string, bytes int) {
	m.follow.bytes.WithLabelValues(channel).Add(float64(bytes))
}

// Leniency counts a rule a followed Source's document broke (follow.Observer).
func (m *Metrics) Leniency(channel, rule string) {
	m.follow.leniencies.WithLabelValues(channel, rule).Inc()
}
