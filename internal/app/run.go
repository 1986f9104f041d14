package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/metrics"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/netguard"
)

// Started tells a caller where the hub listens once it serves.
type Started struct {
	Addr   string
	HubURL string
}

// Run starts a hub with settings s and blocks until ctx ends, then shuts
// down gracefully. ready, when not nil, is called once the hub serves.
func Run(ctx context.Context, s Config, logger *slog.Logger, ready func(Started)) error {
	s = s.withDefaults()
	if err := s.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.Listen, err)
	}
	defer ln.Close()
	hubURL := s.HubURL
	if hubURL == "" {
		hubURL = "http://" + ln.Addr().String() + "/"
	}

	var demoToken bool
	s.AdminToken, demoToken = demoAdminToken(s, logger)

	nc, closeNATS, err := connectNATS(ctx, s, logger)
	if err != nil {
		return err
	}
	defer closeNATS()

	var log *jslog.Log
	err = untilReady(ctx, s.StartupTimeout, logger, "log", func(ctx context.Context) (err error) {
		log, err = jslog.OpenConn(ctx, nc, jslog.Config{Replicas: s.NATSReplicas, MaxAge: s.RetentionAge, MaxBytes: s.RetentionBytes, Logger: logger.With("component", "log")})
		return err
	})
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer log.Close()

	var store hub.Store
	if s.RedisURL != "" {
		var rs *redisstore.Store
		err := untilReady(ctx, s.StartupTimeout, logger, "redis store", func(ctx context.Context) (err error) {
			rs, err = redisstore.Open(ctx, s.RedisURL, redisstore.Config{Logger: logger.With("component", "store")})
			return err
		})
		if err != nil {
			return fmt.Errorf("open redis store: %w", err)
		}
		defer rs.Close()
		store = rs
		logger.Info("state in Redis", "url", redactURL(s.RedisURL))
	} else {
		var ks *kvstore.Store
		err := untilReady(ctx, s.StartupTimeout, logger, "KV store", func(ctx context.Context) (err error) {
			ks, err = kvstore.OpenConn(ctx, nc, kvstore.Config{Replicas: s.NATSReplicas, Logger: logger.With("component", "store")})
			return err
		})
		if err != nil {
			return fmt.Errorf("open KV store: %w", err)
		}
		store = ks
	}

	allow := splitList(s.AllowNetworks)
	if s.Demo && len(allow) == 0 {
		allow = []string{"127.0.0.0/8", "::1/128"}
		logger.Warn("demo mode: loopback callbacks and topics allowed, demo channel is open to any publisher")
	}
	policy, err := netguard.ParsePolicy(allow)
	if err != nil {
		return fmt.Errorf("--allow-networks: %w", err)
	}
	client := netguard.NewClient(policy, netguard.Timeouts{MaxIdleConnsPerHost: max(64, s.PerHost)})

	schedule := delivery.DefaultSchedule()
	if s.Retry != "" {
		if schedule, err = delivery.ParseSchedule(s.Retry); err != nil {
			return fmt.Errorf("--retry: %w", err)
		}
	}
	// a stable identity: a hub restarted on the same address resumes its
	// own deliveries at once instead of waiting for its old claims to expire
	owner := s.Owner
	if owner == "" {
		host, _ := os.Hostname()
		owner = host + "@" + ln.Addr().String()
	}
	tail := logcache.New(log, logcache.Config{Logger: logger.With("component", "logcache")})
	m := metrics.New(metrics.Sources{LogSize: log.Size})
	dash, obs := withDashboard(s, hubURL, m, logger)
	hooks := delivery.NewWebhooks(tail, store, delivery.Config{
		HubURL:    hubURL,
		Client:    client,
		Schedule:  schedule,
		SigMethod: s.SigMethod,
		PerHost:   s.PerHost,
		Observer:  m,
		ClaimTTL:  s.ClaimTTL,
		Reconcile: s.Reconcile,
		Owner:     owner,
		Logger:    logger.With("component", "webhooks"),
	})

	h, err := hub.New(hub.Config{
		HubURL:          hubURL,
		Store:           store,
		Log:             log,
		Client:          client,
		Leases:          hub.LeasePolicy{Min: s.LeaseMin, Default: s.LeaseDefault, Max: s.LeaseMax},
		MaxBody:         s.MaxBody,
		AllowOverlap:    s.AllowOverlap,
		OpenTopics:      s.OpenTopics,
		MaxOpenChannels: s.MaxOpenChannels,
		MaxClockSkew:    s.MaxClockSkew,
		CallbackCheck:   func(ctx context.Context, cb string) error { return policy.CheckTarget(ctx, nil, cb) },
		AdminToken:      s.AdminToken,
		Activator:       hooks,
		Redriver:        hooks,
		Observer:        obs,
		DeliveryStats:   func() any { return hooks.Stats() },
		Home:            home(dash != nil, hubURL),
		Logger:          logger.With("component", "hub"),
	})
	if err != nil {
		return err
	}
	if err := loadChannels(ctx, h, s); err != nil {
		return err
	}

	base, err := url.Parse(hubURL)
	if err != nil {
		return fmt.Errorf("hub URL: %w", err)
	}
	base.Path, base.RawQuery, base.Fragment = "", "", ""
	pm, err := pull.New(tail, store, pull.Config{
		HubURL:   hubURL,
		BaseURL:  base.String(),
		Rotation: changefeed.Rotation{MaxEntries: s.RotateEntries, Period: s.RotatePeriod},
		Logger:   logger.With("component", "pull"),
	})
	if err != nil {
		return err
	}
	ws := delivery.NewWebSockets(delivery.WSConfig{
		Log:            tail,
		AllowedOrigins: splitList(s.WSOrigins),
		Token:          s.WSToken,
		Logger:         logger.With("component", "websocket"),
	})
	m.SetSources(metrics.Sources{
		LogSize:           log.Size,
		WebSockets:        ws.Count,
		WebSocketsRefused: ws.ProtocolClosed,
		Subscriptions: func() []metrics.SubGauge {
			stats := hooks.Stats()
			out := make([]metrics.SubGauge, len(stats))
			for i, st := range stats {
				out[i] = metrics.SubGauge{ID: st.ID, Channel: st.Channel, State: st.State, Backlog: st.Backlog, DeadLetters: st.DeadLetters}
			}
			return out
		},
	})

	mux := http.NewServeMux()
	h.Register(mux)
	pm.Register(mux)
	mux.Handle("GET /ws", ws)
	mux.Handle("GET /metrics", m.Handler())
	if dash != nil {
		dash.Register(mux)
	}
	hl := newHealth([]probe{
		{"NATS", func(context.Context) error { return nc.Err() }},
		{"log", func(ctx context.Context) error { _, _, err := log.Bounds(ctx); return err }},
		{"store", store.Ping},
		{"log cache", engineHealth(tail.Health)},
		{"pull mode", engineHealth(pm.Health)},
		{"webhook delivery", engineHealth(hooks.Health)},
		{"WebSocket delivery", engineHealth(ws.Health)},
	}, s.UnhealthyAfter, logger.With("component", "health"))
	mux.HandleFunc("GET /healthz", hl.serveHealth)
	mux.HandleFunc("GET /readyz", hl.serveReady)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: hub.MaxHeaderBytes}

	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	// an engine that stops on its own (not because bg ended) stops the hub:
	// a hub that takes publishes but no longer delivers must not run on
	engineErr := make(chan error, 8)
	engines := map[string]func(context.Context) error{"log cache": tail.Run, "hub": h.Run, "webhooks": hooks.Run, "pull mode": pm.Run,
		"health": func(ctx context.Context) error { hl.run(ctx); return nil }}
	for name, runner := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runner(bg); err != nil && bg.Err() == nil {
				engineErr <- fmt.Errorf("%s stopped: %w", name, err)
			}
		}()
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	logger.Info("hub serving", "hub_url", hubURL, "addr", ln.Addr().String())
	if dash != nil {
		logDashboard(logger, hubURL, s.AdminToken, demoToken)
	}
	if ready != nil {
		ready(Started{Addr: ln.Addr().String(), HubURL: hubURL})
	}

	var failed error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		stopBG()
		wg.Wait()
		return fmt.Errorf("http server: %w", err)
	case failed = <-engineErr:
		logger.Error("an engine stopped; shutting the hub down", "err", failed)
	}
	logger.Info("shutting down: intake stops, in-flight deliveries finish")
	sctx, cancel := context.WithTimeout(context.Background(), s.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	ws.Shutdown(sctx)
	stopBG()
	wg.Wait()
	if failed != nil {
		return failed
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// connectNATS starts the embedded server or connects to --nats-url, and
// returns a connection that dials again whenever it ends up closed, so the
// log, the store and everything reading them heal by themselves.
func connectNATS(ctx context.Context, s Config, logger *slog.Logger) (*natsconn.Conn, func(), error) {
	opts := []nats.Option{nats.Name("rshub")}
	connLog := logger.With("component", "nats-conn")
	if s.NATSURL != "" {
		c, err := natsconn.New(context.WithoutCancel(ctx), natsconn.Config{Dial: natsconn.URL(s.NATSURL, opts...), Logger: connLog})
		if err != nil {
			return nil, nil, fmt.Errorf("connect to NATS %s: %w", s.NATSURL, err)
		}
		return c, c.Close, nil
	}
	pol, err := embednats.ParseSyncPolicy(s.Sync)
	if err != nil {
		return nil, nil, fmt.Errorf("--sync: %w", err)
	}
	cfg := embednats.Config{DataDir: s.DataDir, Sync: pol, MaxPayload: int32(min(s.MaxBody+64<<10, 64<<20)), Logger: natsLogger(logger)}
	if s.NATSListen != "off" {
		host, port, err := net.SplitHostPort(s.NATSListen)
		if err != nil {
			return nil, nil, fmt.Errorf("--nats-listen: %w", err)
		}
		cfg.Host = host
		if _, err := fmt.Sscan(port, &cfg.Port); err != nil || cfg.Port == 0 {
			cfg.Port = -1
		}
	}
	ns, err := embednats.Start(cfg)
	if err != nil {
		return nil, nil, err
	}
	dial := func(ctx context.Context, extra ...nats.Option) (*nats.Conn, error) {
		return ns.Dial(ctx, append(opts, extra...)...)
	}
	c, err := natsconn.New(context.WithoutCancel(ctx), natsconn.Config{Dial: dial, Logger: connLog})
	if err != nil {
		ns.Shutdown()
		return nil, nil, err
	}
	if u := ns.ClientURL(); u != "" {
		logger.Info("embedded NATS", "url", u, "data_dir", s.DataDir, "sync", pol.String())
	}
	return c, func() { c.Close(); ns.Shutdown() }, nil
}

// loadChannels creates the channels of --channels and, with --demo, the
// demo channel.
func loadChannels(ctx context.Context, h *hub.Hub, s Config) error {
	var chs []hub.Channel
	if s.ChannelsFile != "" {
		raw, err := os.ReadFile(s.ChannelsFile)
		if err != nil {
			return fmt.Errorf("--channels: %w", err)
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&chs); err != nil {
			return fmt.Errorf("--channels %s: want a JSON list of channels: %w", s.ChannelsFile, err)
		}
	}
	if s.Demo {
		chs = append(chs, hub.Channel{Name: "demo", Hosted: true, Trust: hub.TrustOpen})
	}
	for _, c := range chs {
		if _, err := h.PutChannel(ctx, c); err != nil {
			return fmt.Errorf("channel %q: %w", c.Name+c.Topic, err)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// redactURL hides a password in a URL for logs.
func redactURL(raw string) string {
	if i := strings.Index(raw, "@"); i > 0 {
		if j := strings.Index(raw, "://"); j > 0 && j < i {
			return raw[:j+3] + "…@" + raw[i+1:]
		}
	}
	return raw
}

// natsLogger shows the embedded NATS server's warnings and errors only,
// unless the hub logs at debug level.
func natsLogger(l *slog.Logger) *slog.Logger {
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l.With("component", "nats")
	}
	return slog.New(quieter{l.Handler(), slog.LevelWarn}).With("component", "nats")
}

// quieter raises a handler's minimum level (the embedded NATS server is
// chatty at info level).
type quieter struct {
	slog.Handler
	min slog.Level
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quieter) WithAttrs(a []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(a), q.min}
}

func (q quieter) WithGroup(name string) slog.Handler {
	return quieter{q.Handler.WithGroup(name), q.min}
}

// untilReady calls open until it succeeds or timeout passes, backing off
// between attempts: a NATS cluster electing its JetStream leader or a Redis
// still starting is waited for, not fatal.
func untilReady(ctx context.Context, timeout time.Duration, logger *slog.Logger, what string, open func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	wait := 250 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := open(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		logger.Warn("waiting for "+what, "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 5*time.Second)
	}
}
