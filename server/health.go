package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// probe is one dependency readiness depends on.
type probe struct {
	name  string                      // what is unreachable, for /readyz's reason
	check func(context.Context) error // a degradedError is a state, not a fault
}

// degradedError is a check's failure that is the hub's state, not a fault
// of its own (an edge hub cut from its origin): /readyz gives it as the
// reason as it is, and /healthz ignores it, since restarting the hub would
// not mend it.
type degradedError struct{ error }

// probeTimeout bounds one check of one probe: a dependency that has not
// answered by then counts as unreachable.
const probeTimeout = 2 * time.Second

// health tracks readiness over time: /readyz tells whether the hub can take
// and deliver notifications now; /healthz fails once it has not been ready
// for unhealthyAfter, so a supervisor restarts a hub that cannot recover by
// itself. Both answer at once from what run found: the probes run in the
// background, concurrently, each bounded by probeTimeout, so a dependency
// that hangs never holds an answer up.
type health struct {
	probes         []probe
	unhealthyAfter time.Duration
	every          time.Duration
	logger         *slog.Logger
	now            func() time.Time

	checked chan struct{}   // closed once every probe has answered (or timed out) once
	ctx     context.Context // run's, for the rounds observe starts; nil before run

	mu    sync.Mutex
	state []probeState // by probe
	// observedOK, by probe, is set while the last outcome observe
	// recorded was a success and no check has failed since.
	observedOK   []atomic.Bool
	badSince     time.Time // since when a probe that is not degraded fails; zero while none does
	unreadySince time.Time // since when /readyz fails (for the logs); zero while ready or starting
	reason       string    // why not ready; "" when ready
}

// probeState is what the last check of a probe found.
type probeState struct {
	answered bool  // a check ended (or timed out) at least once
	err      error // its outcome
	inflight bool  // a check is running; none is started beside it
}

// notAnswered is /readyz's reason before every probe has answered once.
const notAnswered = "starting: dependencies not checked yet"

func newHealth(probes []probe, unhealthyAfter time.Duration, logger *slog.Logger) *health {
	return &health{probes: probes, unhealthyAfter: unhealthyAfter, every: time.Second, logger: logger, now: time.Now,
		state: make([]probeState, len(probes)), observedOK: make([]atomic.Bool, len(probes)), reason: notAnswered, checked: make(chan struct{})}
}

// run checks every probe every h.every until ctx ends, so that /readyz and
// /healthz answer from state at most that old, and /healthz knows how long
// the hub has been unready even when nobody asks /readyz.
func (h *health) run(ctx context.Context) {
	h.mu.Lock()
	h.ctx = ctx
	h.mu.Unlock()
	t := time.NewTicker(h.every)
	defer t.Stop()
	for {
		h.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// round starts a check of every probe that has none running.
func (h *health) round(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.probes {
		if !h.state[i].inflight {
			h.state[i].inflight = true
			go h.check(ctx, i)
		}
	}
}

// check runs probe i once and records its outcome, or that it did not
// answer within probeTimeout; a check that ignores its context keeps its
// probe from being started again until it returns.
func (h *health) check(ctx context.Context, i int) {
	cctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		err := h.probes[i].check(cctx)
		h.mu.Lock()
		h.state[i].inflight = false
		h.mu.Unlock()
		res <- err
	}()
	var err error
	select {
	case err = <-res:
	case <-cctx.Done():
		select {
		case err = <-res:
		default:
			err = fmt.Errorf("no answer within %v", probeTimeout)
		}
	}
	h.record(i, err)
}

// record notes the outcome of probe i and settles readiness: the reason
// names every failing probe, in the order given.
func (h *health) record(i int, err error) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state[i].answered, h.state[i].err = true, err
	if err != nil {
		h.observedOK[i].Store(false)
	}
	var failing []string
	starting, faulty := false, false
	for j, st := range h.state {
		switch {
		case !st.answered:
			starting = true
		case errors.As(st.err, new(degradedError)):
			failing = append(failing, st.err.Error())
		case st.err != nil:
			faulty = true
			failing = append(failing, fmt.Sprintf("%s unreachable: %v", h.probes[j].name, st.err))
		}
	}
	reason := strings.Join(failing, "; ")
	if starting {
		reason = notAnswered
	} else if h.reason == notAnswered {
		close(h.checked)
	}
	switch {
	case faulty && !starting && h.badSince.IsZero():
		h.badSince = now
	case !faulty:
		h.badSince = time.Time{}
	}
	switch {
	case reason != "" && !starting && h.unreadySince.IsZero():
		h.unreadySince = now
		h.logger.Warn("hub not ready", "reason", reason)
	case reason == "" && !h.unreadySince.IsZero():
		h.logger.Info("hub ready again", "after", now.Sub(h.unreadySince).Round(time.Millisecond))
		h.unreadySince = time.Time{}
	}
	h.reason = reason
}

// observe records err as the outcome of probe name (see probe.name) at
// once, as if a check had just returned it: the hub's own use of a
// dependency is a check (watchedLog). An unknown name is ignored. A
// success after a success costs one atomic load.
func (h *health) observe(name string, err error) {
	for i, p := range h.probes {
		if p.name != name {
			continue
		}
		if err == nil && h.observedOK[i].Load() {
			return
		}
		h.observedOK[i].Store(err == nil)
		h.record(i, err)
		h.mu.Lock()
		ctx := h.ctx
		h.mu.Unlock()
		if err == nil && ctx != nil {
			h.round(ctx) // the engines that depend on it: look again now, not at the next tick
		}
		return
	}
}

// serveReady is /readyz: 200 when every dependency answered the last
// check, otherwise 503 with the reason ("starting" before every probe has
// answered once) and Retry-After. It does no I/O.
func (h *health) serveReady(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	reason := h.reason
	h.mu.Unlock()
	if reason != "" {
		w.Header().Set("Retry-After", "1")
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "ready\n")
}

// serveHealth is /healthz: 200 while the hub is ready or has been unready
// for less than unhealthyAfter (failures of degraded probes aside); 503
// with the reason after that. It does no I/O.
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
