package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/dashboard"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/follow"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/gcgov"
	"github.com/rshub/rshub/internal/metrics"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/telemetry"
	"github.com/rshub/rshub/live"
)

// Started tells a caller where the hub listens once it serves.
type Started struct {
	Addr   string
	HubURL string
	// MetricsAddr is where --metrics-listen serves, "" without it.
	MetricsAddr string
}

// Run starts a hub with settings s and blocks until ctx ends, then shuts
// down gracefully. ready, when not nil, is called once the hub serves and
// its health checks have answered once.
//
// An edge whose origin's log was created again (newOriginLog) starts
// again within Run on the origin's new log.
func Run(ctx context.Context, s Config, logger *slog.Logger, ready func(Started)) error {
	s = s.withDefaults()
	if err := s.Check(); err != nil {
		return err
	}
	former := ""
	for {
		err := runOnce(ctx, s, logger, ready, former)
		var again *newOriginLog
		if !errors.As(err, &again) || ctx.Err() != nil {
			return err
		}
		logger.Error("the origin's log was created again (its data lost): this edge starts again on the new log; live sessions get a reset, webhook deliveries start again at the new log's start",
			"former_epoch", again.former, "epoch", again.epoch)
		former, ready = again.former, nil // ready is told once
	}
}

// runOnce runs one hub process until ctx ends; former is the epoch of the
// origin's log an edge was serving before it started again on a new one
// ("" at the first start).
func runOnce(ctx context.Context, s Config, logger *slog.Logger, ready func(Started), former string) error {
	ctx, restart := context.WithCancelCause(ctx)
	defer restart(nil)
	p := &process{cfg: s, logger: logger, former: former, restart: restart}
	defer p.close()
	for _, step := range []func(context.Context) error{
		p.paceGC,
		p.listen,
		p.buildTracing,
		p.connectNATS,
		p.openLog,
		p.openStore,
		p.buildClient,
		p.buildDelivery,
		p.buildHub,
		p.buildFollow,
		p.buildPull,
		p.buildLive,
		p.buildRoutes,
		p.serveMetrics,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	err := p.serve(ctx, ready)
	if cause := context.Cause(ctx); errors.As(cause, new(*newOriginLog)) {
		return cause
	}
	return err
}

// process is one hub process. Each build step of Run fills in the fields
// the next ones need; serve runs what they built until the context ends
// and shuts it down; close releases what the steps opened, in reverse.
type process struct {
	cfg     Config
	logger  *slog.Logger
	closers []func() // run in reverse by close
	ln      net.Listener
	hubURL  string
	// metricsAddr is where --metrics-listen serves (metricsdoor.go).
	metricsAddr string
	// subscribers and publishers verify private channels' tokens (access.go).
	subscribers, publishers *access.Verifier
	demoToken               bool // cfg.AdminToken was generated for the demo
	// former is the epoch of the origin's log an edge served before it
	// started again on a new one (neworigin.go); restart ends this
	// process's run with a cause.
	former  string
	restart context.CancelCauseFunc
	// startReplaced is the mirror the log replaced when it opened
	// (jslog.Log.Replaced): a later replacement is news.
	startReplaced string

	nc            *natsconn.Conn
	notifications *jslog.Log // the notification log
	// watched is the log as the engines use it: its outcomes go to
	// readiness (logHealth, set once the routes are built).
	watched   watchedLog
	logHealth atomic.Pointer[health]
	store     hub.Store
	policy    netguard.Policy
	client    *http.Client

	tail    *logcache.Cache
	metrics *metrics.Metrics
	dash    *dashboard.Dashboard // nil without an admin token
	obs     hub.Observer
	hooks   *delivery.Webhooks
	tries   *hub.AttemptLog // the webhook attempts, on their way to the store
	hub     *hub.Hub
	follow  *follow.Engine
	pull    *pull.Pull
	live    *live.Sessions
	health  *health
	srv     *http.Server
	tracing *telemetry.Tracing
}

// onClose adds fn to what close runs.
func (p *process) onClose(fn func()) { p.closers = append(p.closers, fn) }

// close releases what the steps opened, the last opened first.
func (p *process) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// paceGC starts a gcgov.Governor, which stops the Go runtime's collection
// every 2 minutes while the hub is idle, unless --gc runtime, GOGC or
// GOMEMLIMIT leaves the pacing to the runtime alone.
func (p *process) paceGC(context.Context) error {
	if p.cfg.GC == GCHeap {
		p.onClose(gcgov.Start(os.LookupEnv, p.logger, p.cfg.GCIdle).Stop)
	}
	return nil
}

// listen opens the listener and settles the hub URL (the listener's
// address unless configured) and the admin token (generated in demo mode
// when none is set).
func (p *process) listen(context.Context) error {
	ln, err := net.Listen("tcp", p.cfg.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w (is another hub running? give this one another --listen address)", p.cfg.Listen, err)
	}
	p.onClose(func() { _ = ln.Close() })
	p.ln = ln
	p.hubURL = p.cfg.HubURL
	if p.hubURL == "" {
		p.hubURL = "http://" + ln.Addr().String() + "/"
	}
	p.cfg.AdminToken, p.demoToken = demoAdminToken(p.cfg, p.logger)
	return nil
}

// serve runs the engines and the HTTP server until ctx ends, the server
// fails or an engine stops by itself, then shuts down: intake stops,
// in-flight deliveries finish within the shutdown timeout, live sessions
// (WebSocket and Server-Sent Events) close with their resume cursor,
// channel states are flushed.
func (p *process) serve(ctx context.Context, ready func(Started)) error {
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	engineErr := p.runEngines(bg, &wg)

	serveErr := make(chan error, 1)
	go func() { serveErr <- p.srv.Serve(p.ln) }()
	p.logger.Info("hub serving", "hub_url", p.hubURL, "addr", p.ln.Addr().String())
	if p.dash != nil {
		logDashboard(p.logger, p.hubURL, p.cfg.AdminToken, p.demoToken)
	}
	if ready != nil {
		select { // /readyz tells the truth from the first call on (within probeTimeout)
		case <-p.health.checked:
		case <-ctx.Done():
		}
		ready(Started{Addr: p.ln.Addr().String(), HubURL: p.hubURL, MetricsAddr: p.metricsAddr})
	}

	var failed error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		stopBG()
		wg.Wait()
		return fmt.Errorf("http server: %w", err)
	case failed = <-engineErr:
		p.logger.Error("an engine stopped; shutting the hub down", "err", failed)
	}
	err := p.shutdown(stopBG, &wg)
	if failed != nil {
		return failed
	}
	return err
}

// runEngines starts the background engines on bg. An engine that stops on
// its own (not because bg ended) is reported on the returned channel, and
// stops the hub: a hub that takes publishes but no longer delivers must
// not run on.
func (p *process) runEngines(bg context.Context, wg *sync.WaitGroup) <-chan error {
	engineErr := make(chan error, 8)
	engines := map[string]func(context.Context) error{
		"log cache": p.tail.Run,
		"hub":       p.hub.Run,
		"webhooks":  p.hooks.Run,
		"attempts":  p.tries.Run,
		"pull mode": p.pull.Run,
		"follow":    p.follow.Run,
		"live":      p.live.Run,
		"health":    func(ctx context.Context) error { p.health.run(ctx); return nil },
	}
	if p.cfg.isEdge() {
		delete(engines, "follow") // the origin follows Sources; an edge never appends
	}
	for name, runner := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runner(bg); err != nil && bg.Err() == nil {
				engineErr <- fmt.Errorf("%s stopped: %w", name, err)
			}
		}()
	}
	return engineErr
}

// shutdown stops intake, lets in-flight work finish within the shutdown
// timeout, then stops the engines and waits for them.
func (p *process) shutdown(stopEngines func(), engines *sync.WaitGroup) error {
	p.logger.Info("shutting down: intake stops, in-flight deliveries finish")
	sctx, cancel := context.WithTimeout(context.Background(), p.cfg.ShutdownTimeout)
	defer cancel()
	err := p.srv.Shutdown(sctx) // closes the live sessions first (RegisterOnShutdown)
	stopEngines()
	engines.Wait()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// buildRoutes serves every part of the hub on one mux: the hub URL and
// hosted topics, the admin API and dashboard (with an admin token), pull
// mode, live sessions (WebSocket, Server-Sent Events), metrics and the
// health endpoints; Config.Middleware, when set, wraps them all.
func (p *process) buildRoutes(context.Context) error {
	mux := http.NewServeMux()
	p.hub.Register(mux)
	if p.cfg.AdminToken != "" {
		api, err := admin.New(admin.Config{
			Token:      p.cfg.AdminToken,
			Hub:        p.hub,
			Store:      p.store,
			Deliveries: p.hooks,
			Follows:    p.follow,
			Quarantine: p.notifications,
			Logger:     p.logger.With("component", "admin"),

			ChannelsReadOnly: p.cfg.edgeChannelsRefusal(),
		})
		if err != nil {
			return err
		}
		api.Register(mux)
	}
	p.pull.Register(mux)
	mux.Handle("GET /ws", p.live)
	mux.Handle("/events", p.live.Events()) // Server-Sent Events; answers OPTIONS (CORS) and 405 itself
	if err := p.registerMercure(mux); err != nil {
		return err
	}
	mux.Handle("GET /metrics", p.metricsHandler()) // metricsdoor.go
	if p.dash != nil {
		p.dash.Register(mux)
	} else {
		registerAdminOff(mux)
	}
	p.health = p.buildHealth()
	p.logHealth.Store(p.health)
	mux.HandleFunc("GET /healthz", p.health.serveHealth)
	mux.HandleFunc("GET /readyz", p.health.serveReady)
	var handler http.Handler = mux
	if p.cfg.isEdge() {
		in, err := newUpstreamIntake(p.hubURL, p.cfg.Upstream, p.cfg.MaxBody, mux, hub.Refusals{Count: p.obs.Rejected}, p.logger.With("component", "edge"))
		if err != nil {
			return err
		}
		handler = in
	}
	if p.cfg.Middleware != nil {
		handler = p.cfg.Middleware(handler)
	}
	p.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: hub.MaxHeaderBytes}
	p.srv.RegisterOnShutdown(p.live.CloseSessions) // Server-Sent Events responses end only with their sessions
	return nil
}

// buildHealth probes every dependency readiness depends on.
func (p *process) buildHealth() *health {
	probes := []probe{
		{"NATS", func(context.Context) error { return p.nc.Err() }},
		{logProbe, func(ctx context.Context) error { _, _, err := p.notifications.Bounds(ctx); return err }},
		{"store", p.store.Ping},
		{"log cache", engineHealth(p.tail.Health)},
		{"pull mode", engineHealth(p.pull.Health)},
		{"webhook delivery", engineHealth(p.hooks.Health)},
		{"WebSocket delivery", engineHealth(p.live.Health)},
	}
	if p.cfg.isEdge() {
		probes = append(probes, p.linkProbe())
	}
	if p.cfg.SubscriberJWKSURL != "" {
		probes = append(probes, keySetProbe("subscriber", "--subscriber-jwks-url", p.subscribers))
	}
	if p.cfg.PublisherJWKSURL != "" {
		probes = append(probes, keySetProbe("publisher", "--publisher-jwks-url", p.publishers))
	}
	return newHealth(probes, p.cfg.UnhealthyAfter, p.logger.With("component", "health"))
}
