// Package metrics exposes the hub's Prometheus metrics: intake (publishes,
// rejects by reason, gaps, verifications), delivery (outcomes, latency
// histograms, subscriptions by delivery state, backlog and dead letters
// of each subscription in trouble, adaptive concurrency of each callback host), WebSocket connections and log size. It implements hub.Observer and the delivery
// engine's observer, and reads gauges from the engines at scrape time.
// Handler serves every series; HandlerHiding leaves out those of channels
// a door may not name (private ones, on an unprotected /metrics).
package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// SubGauge is one subscription's backlog and dead letters at scrape time.
// Only subscriptions in trouble (failing, held back, stalled or holding dead
// letters) get series of their own, so that a scrape's size follows the
// trouble, not the number of subscriptions.
type SubGauge struct {
	ID          string
	Channel     string
	State       string
	Backlog     uint64
	DeadLetters int
	// CallbackBreakerOpen is true while its callback's circuit is open or
	// half-open (delivery/isolate.go).
	CallbackBreakerOpen bool
}

// HostGauge is one callback host's adaptive delivery concurrency at scrape
// time; only hosts delivered to recently have one.
type HostGauge struct {
	Host     string
	Limit    int // requests allowed in flight
	InFlight int
	Paused   bool // a Retry-After pause runs
	// Rate is the host's deliveries per second (0: no limit); RateWaiting
	// the deliveries waiting for it or for a pause to end.
	Rate        float64
	RateWaiting int
	// BaseSeconds is the host's fastest answer of the last 5 to 10 s,
	// SmoothedSeconds its answer time over about the last 8 answers: the
	// limit grows while SmoothedSeconds stays near BaseSeconds.
	BaseSeconds, SmoothedSeconds float64
	// BreakerOpen is true while the host's circuit is open or half-open;
	// BreakerFailures is the failures it counted since its last success.
	BreakerOpen     bool
	BreakerFailures int
}

// Sources are read at every scrape; nil fields are skipped.
type Sources struct {
	// Subscriptions returns the subscriptions in trouble.
	Subscriptions func() []SubGauge
	// SubscriptionStates returns how many subscriptions this hub delivers
	// in each delivery state, and the dead letters they hold.
	SubscriptionStates func() (byState map[string]int, deadLetters int)
	WebSockets         func() int
	// Events counts open Server-Sent Events streams.
	Events func() int
	// WebSocketsRefused counts WebSocket clients closed for sending what
	// the protocol does not allow.
	WebSocketsRefused func() uint64
	// LogSize returns the log's message count and bytes.
	LogSize func(ctx context.Context) (msgs, bytes uint64, err error)
	// SubscriptionLimits returns what the subscription limits of
	// --open-topics counted: the subscriptions held and the subscribe
	// requests refused by the hub-wide and the per-callback-host limit.
	SubscriptionLimits func() (held int, refusedHub, refusedHost uint64)
	// LogQuarantined counts the log's messages that never decode, which
	// readers skip.
	LogQuarantined func() uint64
	// AttemptLog counts the webhook attempt records written to the store
	// and those dropped (its buffer full or the store failing).
	AttemptLog func() (written, dropped uint64)
	// Hosts returns the delivery concurrency of the callback hosts
	// delivered to recently.
	Hosts func() []HostGauge
}

// Metrics holds the hub's collectors in its own registry.
type Metrics struct {
	reg           *prometheus.Registry
	publishes     *prometheus.CounterVec
	publishBytes  prometheus.Counter
	publishTime   prometheus.Histogram
	rejects       *prometheus.CounterVec
	verifications *prometheus.CounterVec
	unstored      *prometheus.CounterVec
	gaps          *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	// delivered counts deliveries' usual outcome without looking its
	// label up on every delivery.
	delivered    prometheus.Counter
	deliveryTime prometheus.Histogram
	deliveryLag  prometheus.Histogram
	gauges       *gauges
	follow       follow
	keySets      *prometheus.CounterVec
}

// New registers every collector, including the Go runtime and process
// collectors, in a new registry.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	m.publishes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_publishes_total", Help: "Notifications stored in the log, by channel."}, []string{"channel"})
	m.publishBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "rshub_publish_bytes_total", Help: "Bytes of notifications stored."})
	m.publishTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rshub_publish_duration_seconds", Help: "Time from intake to durable append.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	m.rejects = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_publish_rejects_total", Help: "Refused requests at every door (the hub URL, hosted topics, live sessions, pull-mode documents, an edge's forwarder), by reason (docs/usage.md, Refusals)."}, []string{"reason"})
	m.verifications = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_verifications_total", Help: "Verifications of intent, by mode and result."}, []string{"mode", "result"})
	m.unstored = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_subscription_store_failures_total", Help: "Verified subscribe and unsubscribe requests the store did not take within the retry time (hub.Config.StoreRetry), by mode; each such subscribe was denied to its subscriber (hub.mode=denied)."}, []string{"mode"})
	m.gaps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_gaps_total", Help: "Gaps recorded in channel histories, by channel."}, []string{"channel"})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rshub_deliveries_total", Help: "Webhook delivery attempts, by outcome (delivered, failed, gone, dead_letter)."}, []string{"outcome"})
	m.delivered = m.deliveries.WithLabelValues("delivered")
	m.deliveryTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rshub_delivery_duration_seconds", Help: "Duration of webhook POSTs.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)})
	m.deliveryLag = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rshub_delivery_lag_seconds", Help: "Time from a notification's receipt by the hub to its successful delivery.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 20)})
	for _, c := range []prometheus.Collector{m.publishes, m.publishBytes, m.publishTime, m.rejects, m.verifications, m.unstored, m.gaps, m.deliveries, m.deliveryTime, m.deliveryLag} {
		f(c)
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.gauges = newGauges(src)
	f(m.gauges)
	m.follow = newFollow(m.reg)
	m.keySets = newKeySets(m.reg)
	return m
}

// SetSources replaces the gauge sources read at scrape time (the engines
// they read are often built after the Metrics they report to).
func (m *Metrics) SetSources(src Sources) {
	m.gauges.mu.Lock()
	m.gauges.src = src
	m.gauges.mu.Unlock()
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry returns the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Published counts a stored notification (hub.Observer).
func (m *Metrics) Published(channel string, bytes int, took time.Duration) {
	m.publishes.WithLabelValues(channel).Inc()
	m.publishBytes.Add(float64(bytes))
	m.publishTime.Observe(took.Seconds())
}

// Rejected counts a refused request at the hub URL (hub.Observer).
func (m *Metrics) Rejected(reason string) { m.rejects.WithLabelValues(reason).Inc() }

// Verified counts a verification of intent (hub.Observer).
func (m *Metrics) Verified(mode string, ok bool) {
	res := "failed"
	if ok {
		res = "ok"
	}
	m.verifications.WithLabelValues(mode, res).Inc()
}

// Unstored counts a verified request the store did not take
// (hub.Observer).
func (m *Metrics) Unstored(mode string) { m.unstored.WithLabelValues(mode).Inc() }

// GapRecorded counts a gap (hub.Observer).
func (m *Metrics) GapRecorded(channel string) { m.gaps.WithLabelValues(channel).Inc() }

// Attempted records one webhook POST: its outcome, how long it took and,
// when delivered, how long after the hub received the notification.
func (m *Metrics) Attempted(outcome string, took, sinceReceived time.Duration) {
	if outcome == "delivered" {
		m.delivered.Inc()
	} else {
		m.deliveries.WithLabelValues(outcome).Inc()
	}
	if took > 0 {
		m.deliveryTime.Observe(took.Seconds())
	}
	if outcome == "delivered" && sinceReceived > 0 {
		m.deliveryLag.Observe(sinceReceived.Seconds())
	}
}

// gauges reads the engines' current figures at scrape time.
type gauges struct {
	mu                                   sync.Mutex
	src                                  Sources
	backlog, dead, ws, wsRefused, events *prometheus.Desc
	logMsgs, logBytes, logQuarantined    *prometheus.Desc
	subStates, deadTotal                 *prometheus.Desc
	subsHeld, subsRefused                *prometheus.Desc
	attempts                             *prometheus.Desc
	hostLimit, hostInFlight, hostPaused  *prometheus.Desc
	hostRate, hostRateWait, hostAnswer   *prometheus.Desc
	hostBreaker, hostBreakerFails        *prometheus.Desc
	subBreaker                           *prometheus.Desc
}

func newGauges(src Sources) *gauges {
	return &gauges{
		src:              src,
		backlog:          prometheus.NewDesc("rshub_subscription_backlog", "Notifications not yet delivered to a subscription (upper bound).", []string{"subscription", "channel", "state"}, nil),
		dead:             prometheus.NewDesc("rshub_subscription_dead_letters", "Dead letters of a subscription.", []string{"subscription", "channel"}, nil),
		ws:               prometheus.NewDesc("rshub_websocket_connections", "Open WebSocket sessions.", nil, nil),
		events:           prometheus.NewDesc("rshub_events_connections", "Open Server-Sent Events streams.", nil, nil),
		wsRefused:        prometheus.NewDesc("rshub_websocket_protocol_closed_total", "WebSocket clients closed for sending frames the protocol does not allow.", nil, nil),
		logMsgs:          prometheus.NewDesc("rshub_log_messages", "Notifications held in the log.", nil, nil),
		logBytes:         prometheus.NewDesc("rshub_log_bytes", "Bytes held in the log.", nil, nil),
		logQuarantined:   prometheus.NewDesc("rshub_log_quarantined_total", "Log messages that can never be decoded, skipped by every reader (listed at /admin/quarantine).", nil, nil),
		subStates:        prometheus.NewDesc("rshub_subscriptions", "Webhook subscriptions this hub delivers, by delivery state.", []string{"state"}, nil),
		deadTotal:        prometheus.NewDesc("rshub_dead_letters", "Dead letters held by the subscriptions this hub delivers.", nil, nil),
		subsHeld:         prometheus.NewDesc("rshub_subscriptions_counted", "Subscriptions the store holds, as the --open-topics subscription limits last counted them.", nil, nil),
		hostLimit:        prometheus.NewDesc("rshub_delivery_host_limit", "Webhook requests a callback host may have in flight, as its adaptive limit stands (--per-host-min to --per-host-max).", []string{"host"}, nil),
		hostInFlight:     prometheus.NewDesc("rshub_delivery_host_in_flight", "Webhook requests in flight to a callback host.", []string{"host"}, nil),
		hostRate:         prometheus.NewDesc("rshub_delivery_host_rate", "Webhook deliveries a second a callback host is held to (--per-host-rate; absent: no limit).", []string{"host"}, nil),
		hostRateWait:     prometheus.NewDesc("rshub_delivery_host_rate_waiting", "Webhook deliveries waiting for a callback host's rate or the end of its Retry-After pause, before they wait for a slot.", []string{"host"}, nil),
		hostAnswer:       prometheus.NewDesc("rshub_delivery_host_answer_seconds", "A callback host's answer time: base, its fastest of the last 5 to 10 s; smoothed, over about its last 8 answers. Its limit grows while smoothed stays within three times base and a millisecond.", []string{"host", "kind"}, nil),
		hostBreaker:      prometheus.NewDesc("rshub_delivery_host_breaker_open", "1 while a callback host's circuit is open or half-open: it refused connections, or several of its callbacks answered 429 or 503 or timed out (--breaker-failures, --breaker-host-endpoints).", []string{"host"}, nil),
		hostBreakerFails: prometheus.NewDesc("rshub_delivery_host_breaker_failures", "Failures a callback host's circuit breaker counted since the host last answered.", []string{"host"}, nil),
		subBreaker:       prometheus.NewDesc("rshub_subscription_callback_breaker_open", "1 while a subscription's callback circuit is open or half-open (--breaker-callback-failures); only subscriptions in trouble have one.", []string{"subscription", "channel"}, nil),
		hostPaused:       prometheus.NewDesc("rshub_delivery_host_paused", "1 while a callback host's Retry-After pauses deliveries to it.", []string{"host"}, nil),
		subsRefused:      prometheus.NewDesc("rshub_subscription_limit_refusals_total", "Subscribe requests refused by an --open-topics subscription limit (hub: --max-subscriptions, callback_host: --max-subscriptions-per-host).", []string{"limit"}, nil),
		attempts:         prometheus.NewDesc("rshub_attempt_log_records_total", "Webhook attempt records for the attempt log, by result: written to the store, or dropped (buffer full or the store failing; the deliveries themselves go on).", []string{"result"}, nil),
	}
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{g.backlog, g.dead, g.ws, g.wsRefused, g.events, g.logMsgs, g.logBytes, g.logQuarantined, g.subStates, g.deadTotal, g.subsHeld, g.subsRefused, g.attempts, g.hostLimit, g.hostInFlight, g.hostPaused, g.hostRate, g.hostRateWait, g.hostAnswer, g.hostBreaker, g.hostBreakerFails, g.subBreaker} {
		ch <- d
	}
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	src := g.src
	g.mu.Unlock()
	if src.Subscriptions != nil {
		for _, s := range src.Subscriptions() {
			ch <- prometheus.MustNewConstMetric(g.backlog, prometheus.GaugeValue, float64(s.Backlog), s.ID, s.Channel, s.State)
			ch <- prometheus.MustNewConstMetric(g.dead, prometheus.GaugeValue, float64(s.DeadLetters), s.ID, s.Channel)
			ch <- prometheus.MustNewConstMetric(g.subBreaker, prometheus.GaugeValue, one(s.CallbackBreakerOpen), s.ID, s.Channel)
		}
	}
	if src.SubscriptionStates != nil {
		byState, dead := src.SubscriptionStates()
		for st, n := range byState {
			ch <- prometheus.MustNewConstMetric(g.subStates, prometheus.GaugeValue, float64(n), st)
		}
		ch <- prometheus.MustNewConstMetric(g.deadTotal, prometheus.GaugeValue, float64(dead))
	}
	if src.WebSockets != nil {
		ch <- prometheus.MustNewConstMetric(g.ws, prometheus.GaugeValue, float64(src.WebSockets()))
	}
	if src.Events != nil {
		ch <- prometheus.MustNewConstMetric(g.events, prometheus.GaugeValue, float64(src.Events()))
	}
	if src.WebSocketsRefused != nil {
		ch <- prometheus.MustNewConstMetric(g.wsRefused, prometheus.CounterValue, float64(src.WebSocketsRefused()))
	}
	if src.SubscriptionLimits != nil {
		held, hubRefused, hostRefused := src.SubscriptionLimits()
		ch <- prometheus.MustNewConstMetric(g.subsHeld, prometheus.GaugeValue, float64(held))
		ch <- prometheus.MustNewConstMetric(g.subsRefused, prometheus.CounterValue, float64(hubRefused), "hub")
		ch <- prometheus.MustNewConstMetric(g.subsRefused, prometheus.CounterValue, float64(hostRefused), "callback_host")
	}
	if src.AttemptLog != nil {
		written, dropped := src.AttemptLog()
		ch <- prometheus.MustNewConstMetric(g.attempts, prometheus.CounterValue, float64(written), "written")
		ch <- prometheus.MustNewConstMetric(g.attempts, prometheus.CounterValue, float64(dropped), "dropped")
	}
	if src.Hosts != nil {
		for _, h := range src.Hosts() {
			paused := 0.0
			if h.Paused {
				paused = 1
			}
			ch <- prometheus.MustNewConstMetric(g.hostLimit, prometheus.GaugeValue, float64(h.Limit), h.Host)
			ch <- prometheus.MustNewConstMetric(g.hostInFlight, prometheus.GaugeValue, float64(h.InFlight), h.Host)
			ch <- prometheus.MustNewConstMetric(g.hostPaused, prometheus.GaugeValue, paused, h.Host)
			ch <- prometheus.MustNewConstMetric(g.hostBreaker, prometheus.GaugeValue, one(h.BreakerOpen), h.Host)
			ch <- prometheus.MustNewConstMetric(g.hostBreakerFails, prometheus.GaugeValue, float64(h.BreakerFailures), h.Host)
			ch <- prometheus.MustNewConstMetric(g.hostRateWait, prometheus.GaugeValue, float64(h.RateWaiting), h.Host)
			ch <- prometheus.MustNewConstMetric(g.hostAnswer, prometheus.GaugeValue, h.BaseSeconds, h.Host, "base")
			ch <- prometheus.MustNewConstMetric(g.hostAnswer, prometheus.GaugeValue, h.SmoothedSeconds, h.Host, "smoothed")
			if h.Rate > 0 {
				ch <- prometheus.MustNewConstMetric(g.hostRate, prometheus.GaugeValue, h.Rate, h.Host)
			}
		}
	}
	if src.LogQuarantined != nil {
		ch <- prometheus.MustNewConstMetric(g.logQuarantined, prometheus.CounterValue, float64(src.LogQuarantined()))
	}
	if src.LogSize != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if msgs, bytes, err := src.LogSize(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(g.logMsgs, prometheus.GaugeValue, float64(msgs))
			ch <- prometheus.MustNewConstMetric(g.logBytes, prometheus.GaugeValue, float64(bytes))
		}
	}
}

// one is 1 for true, 0 for false.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
