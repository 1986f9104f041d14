package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// probe is one dependency readiness depends on.
type probe struct {
	name  string // what is unreachable, for /readyz's reason
	check func(context.Context) error
}

// probeTimeout bounds one round of probes.
const probeTimeout = 2 * time.Second

// health tracks readiness over time: /readyz tells whether the hub can take
// and deliver notifications now; /healthz fails once it has not been ready
// for unhealthyAfter, so a supervisor restarts a hub that cannot recover by
// itself.
type health struct {
	probes         []probe
	unhealthyAfter time.Duration
	every          time.Duration
	logger         *slog.Logger
	now            func() time.Time

	mu       sync.Mutex
	badSince time.Time // zero while ready
	reason   string    // why not ready
}

func newHealth(probes []probe, unhealthyAfter time.Duration, logger *slog.Logger) *health {
	return &health{probes: probes, unhealthyAfter: unhealthyAfter, every: time.Second, logger: logger, now: time.Now}
}

// probe runs every check once and records the outcome; it returns the
// reason the hub is not ready, or "".
func (h *health) probe(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	reason := ""
	for _, p := range h.probes {
		if err := p.check(ctx); err != nil {
			reason = fmt.Sprintf("%s unreachable: %v", p.name, err)
			break
		}
	}
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case reason != "" && h.badSince.IsZero():
		h.badSince = now
		h.logger.Warn("hub not ready", "reason", reason)
	case reason == "" && !h.badSince.IsZero():
		h.logger.Info("hub ready again", "after", now.Sub(h.badSince).Round(time.Millisecond))
		h.badSince = time.Time{}
	}
	h.reason = reason
	return reason
}

// run probes every h.every until ctx ends, so /healthz knows how long the
// hub has been unready even when nobody asks /readyz.
func (h *health) run(ctx context.Context) {
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		h.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// serveReady is /readyz: 200 when every dependency answers now, otherwise
// 503 with the reason and Retry-After.
func (h *health) serveReady(w http.ResponseWriter, r *http.Request) {
	if reason := h.probe(r.Context()); reason != "" {
		w.Header().Set("Retry-After", "1")
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "ready\n")
}

// serveHealth is /healthz: 200 while the hub is ready or has been unready
// for less than unhealthyAfter; 503 with the reason after that.
func (h *health) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	since, reason := h.badSince, h.reason
	h.mu.Unlock()
	if !since.IsZero() {
		if d := h.now().Sub(since); d >= h.unhealthyAfter {
			http.Error(w, fmt.Sprintf("unhealthy: not ready for %v (limit --unhealthy-after %v): %s", d.Round(time.Second), h.unhealthyAfter, reason), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = io.WriteString(w, "ok\n")
}

// engineHealth turns an engine's Health method into a probe: an engine
// that has been failing for a while (it retries by itself) makes the hub
// unready with its latest error.
func engineHealth(health func() (ok bool, since time.Time, err error)) func(context.Context) error {
	return func(context.Context) error {
		ok, since, err := health()
		if ok {
			return nil
		}
		return fmt.Errorf("stalled for %v: %w", time.Since(since).Round(time.Second), err)
	}
}
