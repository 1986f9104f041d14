package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/metrics"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// tailPreload is how many of the log's newest records the log cache loads
// when the hub starts: half its ring.
const tailPreload = logcache.DefaultMaxRecords / 2

// buildClient makes the HTTP client for callbacks and topic fetches: it
// refuses non-global addresses unless --allow-networks (or --demo, for
// loopback) lists them.
func (p *process) buildClient(context.Context) error {
	allow := splitList(p.cfg.AllowNetworks)
	if p.cfg.Demo && len(allow) == 0 {
		allow = []string{"127.0.0.0/8", "::1/128"}
		p.logger.Warn("demo mode: loopback callbacks and topics allowed, demo channel is open to any publisher")
	}
	policy, err := netguard.ParsePolicy(allow)
	if err != nil {
		return fmt.Errorf("--allow-networks: %w", err)
	}
	p.policy = policy
	p.client = netguard.NewClient(policy, netguard.Timeouts{MaxIdleConnsPerHost: max(64, p.cfg.PerHostMax), MaxIdleConns: webhookIdleConns})
	return nil
}

// webhookIdleConns is how many idle connections the delivery client keeps
// in all: fan-out to a thousand callback hosts reuses a connection per
// host instead of dialling for most deliveries (each idle connection holds
// some 20 KB of buffers and goroutine stacks).
const webhookIdleConns = 2048

// buildDelivery makes the log cache every reader shares, the metrics, the
// dashboard (with an admin token) and the webhook delivery engine.
func (p *process) buildDelivery(context.Context) error {
	s := p.cfg
	schedule := delivery.DefaultSchedule()
	if s.Retry != "" {
		var err error
		if schedule, err = delivery.ParseSchedule(s.Retry); err != nil {
			return fmt.Errorf("--retry: %w", err)
		}
	}
	// a stable identity: a hub restarted on the same address resumes its
	// own deliveries at once instead of waiting for its old claims to expire
	owner := s.Owner
	if owner == "" {
		host, _ := os.Hostname()
		owner = host + "@" + p.ln.Addr().String()
	}
	// the newest records preloaded: queues that start with the hub (a
	// restart, a hub joining a cluster, shards taken over) mostly resume
	// within them and read them from memory, not each from the log at once
	p.watched = watchedLog{Log: p.notifications, health: &p.logHealth}
	p.tail = logcache.New(p.watched, logcache.Config{Preload: tailPreload, Logger: p.logger.With("component", "logcache")})
	// this hub's own appends reach its readers without a read of the log
	p.notifications.OnAppend(p.tail.Offer)
	p.metrics = metrics.New(metrics.Sources{LogSize: p.notifications.Size, LogQuarantined: p.notifications.QuarantinedTotal})
	p.dash, p.obs = withDashboard(s, p.hubURL, p.metrics, p.logger)
	p.tries = hub.NewAttemptLog(p.store, hub.AttemptLogConfig{Logger: p.logger.With("component", "attempts")})
	p.hooks = delivery.NewWebhooks(p.tail, p.store, delivery.Config{
		HubURL:    p.hubURL,
		Client:    p.client,
		Schedule:  schedule,
		SigMethod: s.SigMethod,
		Scheme:    s.SignatureScheme,
		PerHost:   s.PerHost,
		Coalesce:  delivery.CoalesceConfig{Threshold: s.CoalesceThreshold},
		Observer:  p.metrics,
		Attempts:  p.tries,
		ClaimTTL:  s.ClaimTTL,
		Reconcile: s.Reconcile,
		Owner:     owner,
		Tracer:    p.tracing.Tracer("delivery"),
		Logger:    p.logger.With("component", "webhooks"),

		// bounds of the adaptive per-host limit PerHost starts
		PerHostMin: s.PerHostMin,
		PerHostMax: s.PerHostMax,

		DefaultRate: s.DefaultRate,
		MaxRate:     s.MaxRate,
		PerHostRate: s.PerHostRate,
		Breaker: delivery.BreakerConfig{Failures: s.BreakerFailures, CoolDown: s.BreakerCoolDown,
			CallbackFailures: s.BreakerCallbackFailures, CallbackCoolDown: s.BreakerCallbackCoolDown,
			HostEndpoints: s.BreakerHostEndpoints},
	})
	return nil
}

// buildHub makes the WebSub hub and creates the configured channels.
func (p *process) buildHub(ctx context.Context) error {
	s := p.cfg
	failures := newKeySetFailures(p.metrics.KeySetFailed, p.logger.With("component", "access"))
	rules, err := s.mercureRules(p.hubURL)
	if err != nil {
		return err
	}
	subscribers, publishers, err := s.verifiers(p.client, failures.reporter, rules)
	if err != nil {
		return err
	}
	p.subscribers, p.publishers = subscribers, publishers
	var openElsewhere func(context.Context, string) error
	var mercureOrigin string
	if s.isEdge() { // its channels are the origin's: open topics there (edgetopics.go), raw Mercure topics are the origin's URLs
		openElsewhere, mercureOrigin = newOriginTopics(s.Upstream, p.store).Open, s.Upstream
	}
	h, err := hub.New(hub.Config{
		HubURL:                  p.hubURL,
		Store:                   p.store,
		Log:                     p.watched,
		Client:                  p.client,
		Leases:                  hub.LeasePolicy{Min: s.LeaseMin, Default: s.LeaseDefault, Max: s.LeaseMax},
		MaxBody:                 s.MaxBody,
		AllowOverlap:            s.AllowOverlap,
		OpenTopics:              s.OpenTopics,
		OpenElsewhere:           openElsewhere,
		MercureOrigin:           mercureOrigin,
		MaxOpenChannels:         s.MaxOpenChannels,
		MaxSubscriptions:        s.MaxSubscriptions,
		MaxSubscriptionsPerHost: s.MaxSubscriptionsPerHost,
		MaxClockSkew:            s.MaxClockSkew,
		CallbackCheck:           func(ctx context.Context, cb string) error { return p.policy.CheckTarget(ctx, nil, cb) },
		Activator:               p.hooks,
		Observer:                p.obs,
		Subscribers:             subscribers,
		Publishers:              publishers,
		CookieOrigins:           splitList(p.cfg.WSOrigins),
		Home:                    home(p.dash != nil, p.hubURL),
		Tracer:                  p.tracing.Tracer("hub"),
		Logger:                  p.logger.With("component", "hub"),
	})
	if err != nil {
		return err
	}
	p.hub = h
	n, err := loadChannels(ctx, h, s)
	if err == nil && s.ChannelsFile != "" {
		p.logger.Info("--channels file loaded", "file", s.ChannelsFile, "channels", n)
	}
	if err == nil && subscribers == nil {
		warnUnreadable(ctx, p.store, p.logger)
	}
	return err
}

// buildPull makes pull mode: the ResourceSync documents derived from the
// log.
func (p *process) buildPull(context.Context) error {
	base, err := url.Parse(p.hubURL)
	if err != nil {
		return fmt.Errorf("hub URL: %w", err)
	}
	base.Path, base.RawQuery, base.Fragment = "", "", ""
	p.pull, err = pull.New(p.tail, p.store, pull.Config{
		HubURL:       p.hubURL,
		BaseURL:      base.String(),
		Rotation:     changefeed.Rotation{MaxEntries: p.cfg.RotateEntries, Period: p.cfg.RotatePeriod},
		Logger:       p.logger.With("component", "pull"),
		LocalChanges: p.hub.ChannelChanges, // a channel deleted here leaves the documents at once
		Readers:      p.hub.Subscribers(),
		Refusals:     hub.Refusals{Count: p.obs.Rejected},
	})
	if err == nil && !p.cfg.isEdge() { // an edge's framework notifications come from the origin
		p.pull.EnableFramework(p.hub) // announce rotations and channels on framework channels, through intake
	}
	return err
}

// buildLive makes the live sessions (WebSocket and Server-Sent Events) and
// gives the metrics every source they report on.
func (p *process) buildLive(context.Context) error {
	p.live = live.New(live.Config{
		Log:            p.tail,
		AllowedOrigins: splitList(p.cfg.WSOrigins),
		Token:          p.cfg.WSToken,
		Channels:       p.hub,
		Readers:        p.hub.Subscribers(),
		Origin:         p.hub.MercureOrigin(),
		Tracer:         p.tracing.Tracer("live"),
		Logger:         p.logger.With("component", "websocket"),
		Refusals:       hub.Refusals{Count: p.obs.Rejected},
	})
	hooks := p.hooks
	p.metrics.SetSources(metrics.Sources{
		LogSize:            p.notifications.Size,
		LogQuarantined:     p.notifications.QuarantinedTotal,
		AttemptLog:         p.tries.Stats,
		WebSockets:         p.live.WebSocketCount,
		Events:             p.live.EventsCount,
		WebSocketsRefused:  p.live.ProtocolClosed,
		SubscriptionStates: hooks.StateCounts,
		SubscriptionLimits: func() (int, uint64, uint64) {
			st := p.hub.SubscriptionLimitStats()
			return st.Counted, st.RefusedHub, st.RefusedHost
		},
		Hosts: func() []metrics.HostGauge {
			hosts := hooks.Hosts()
			out := make([]metrics.HostGauge, len(hosts))
			for i, h := range hosts {
				out[i] = metrics.HostGauge{Host: h.Host, Limit: h.Limit, InFlight: h.InFlight, Paused: !h.PausedUntil.IsZero(), Rate: h.Rate, RateWaiting: h.RateWaiting,
					BaseSeconds: h.BaselineMS / 1000, SmoothedSeconds: h.SmoothedMS / 1000,
					BreakerOpen: h.Breaker.State != delivery.BreakerClosed.String(), BreakerFailures: h.Breaker.ConsecutiveFailures}
			}
			return out
		},
		Subscriptions: func() []metrics.SubGauge {
			stats := hooks.Failing()
			out := make([]metrics.SubGauge, len(stats))
			for i, st := range stats {
				out[i] = metrics.SubGauge{ID: st.ID, Channel: st.Channel, State: st.State, Backlog: st.Backlog, DeadLetters: st.DeadLetters,
					CallbackBreakerOpen: st.CallbackBreaker != nil && st.CallbackBreaker.State != delivery.BreakerClosed.String()}
			}
			return out
		},
	})
	return nil
}

// loadChannels creates the channels of --channels and, with --demo, the
// demo channel; it returns how many channels the file holds.
func loadChannels(ctx context.Context, h *hub.Hub, s Config) (int, error) {
	var chs []hub.Channel
	if s.ChannelsFile != "" {
		raw, err := os.ReadFile(s.ChannelsFile)
		if err != nil {
			return 0, fmt.Errorf("--channels: %w", err)
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&chs); err != nil {
			return 0, fmt.Errorf("--channels %s: want a JSON list of channels: %w", s.ChannelsFile, err)
		}
	}
	n := len(chs)
	if s.Demo {
		chs = append(chs, hub.Channel{Name: "demo", Hosted: true, Trust: hub.TrustOpen})
	}
	if s.isEdge() { // the origin's channels, the demo's among them (Check refuses --channels)
		return 0, nil
	}
	for i, c := range chs {
		if _, err := h.PutChannel(ctx, c); err != nil {
			return 0, fmt.Errorf("--channels: channel %d (name %q, topic %q): %w", i+1, wire.Clip(c.Name), wire.Clip(c.Topic), err)
		}
	}
	return n, nil
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
