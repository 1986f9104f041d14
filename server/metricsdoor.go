package server

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rshub/rshub/hub"
)

// The /metrics door. On the hub's listener it answers anyone, without the
// series of private channels (a channel's name is the channel's: a
// private one is named to no one who gets 404 for its documents), unless
// --metrics-token is set: then only a request carrying it as a bearer
// token is answered, with every series. --metrics-listen serves every
// series on a listener of its own (loopback or the monitoring network, as
// Prometheus deployments expect), behind the token too when one is set.

// metricsLookup bounds how long a scrape waits to learn whether a channel
// is private; one that cannot tell hides the channel.
const metricsLookup = 5 * time.Second

// metricsHandler is /metrics on the hub's listener.
func (p *process) metricsHandler() http.Handler {
	if p.cfg.MetricsToken != "" {
		return requireToken(p.cfg.MetricsToken, p.metrics.Handler())
	}
	return p.metrics.HandlerHiding(p.privateChannel)
}

// privateChannel reports whether channel is private, or cannot be told
// apart from one: a channel the store does not know (deleted: its
// counters stay, and it may have been private) or cannot tell about now.
func (p *process) privateChannel(channel string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), metricsLookup)
	defer cancel()
	ch, err := p.hub.ChannelByName(ctx, channel)
	return err != nil || ch.Private
}

// requireToken answers 401 to a request without "Authorization: Bearer
// token".
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "the metrics need the bearer token of --metrics-token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveMetrics starts --metrics-listen's listener, when set.
func (p *process) serveMetrics(context.Context) error {
	if p.cfg.MetricsListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", p.cfg.MetricsListen)
	if err != nil {
		return fmt.Errorf("--metrics-listen %s: %w", p.cfg.MetricsListen, err)
	}
	var h http.Handler = p.metrics.Handler()
	if p.cfg.MetricsToken != "" {
		h = requireToken(p.cfg.MetricsToken, h)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: hub.MaxHeaderBytes}
	go func() { _ = srv.Serve(ln) }()
	p.onClose(func() { _ = srv.Close() })
	p.metricsAddr = ln.Addr().String()
	p.logger.Info("metrics serving", "addr", p.metricsAddr, "token", p.cfg.MetricsToken != "")
	return nil
}
