package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/hub/redisstore"
)

// openLog opens the notification log on the JetStream stream, waiting up
// to the startup timeout for JetStream to answer.
func (p *process) openLog(ctx context.Context) error {
	s := p.cfg
	cfg := jslog.Config{Replicas: s.NATSReplicas, MaxAge: s.RetentionAge, MaxBytes: s.RetentionBytes, Logger: p.logger.With("component", "log")}
	what := "log"
	if s.isEdge() { // a mirror of the origin's log (edge.go)
		cfg.Upstream, what = s.UpstreamDomain, "the origin's log (JetStream domain "+s.UpstreamDomain+") to mirror"
		cfg.AwaitOrigin = p.former != "" // starting again on the origin's new log: not the former one's mirror
	}
	link := newLinkCheck(s, time.Now())
	err := untilReady(ctx, s.StartupTimeout, p.logger, what, func(ctx context.Context) (err error) {
		p.notifications, err = jslog.OpenConn(ctx, p.nc, cfg)
		return link.explain(ctx, err, time.Now())
	})
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	p.onClose(func() { _ = p.notifications.Close() })
	return nil
}

// openStore opens the hub's state store: Redis with --redis-url, else
// JetStream KV on the same NATS connection; it waits up to the startup
// timeout for either to answer.
func (p *process) openStore(ctx context.Context) error {
	s := p.cfg
	if s.RedisURL != "" {
		var rs *redisstore.Store
		err := untilReady(ctx, s.StartupTimeout, p.logger, "redis store", func(ctx context.Context) (err error) {
			rs, err = redisstore.Open(ctx, s.RedisURL, redisstore.Config{Logger: p.logger.With("component", "store")})
			return err
		})
		if err != nil {
			return fmt.Errorf("open redis store: %w", err)
		}
		p.onClose(func() { _ = rs.Close() })
		p.store = rs
		p.logger.Info("state in Redis", "url", redactURL(s.RedisURL))
		return nil
	}
	var ks *kvstore.Store
	deadline := time.Now().Add(s.StartupTimeout)
	err := untilReady(ctx, s.StartupTimeout, p.logger, "KV store", func(ctx context.Context) (err error) {
		ks, err = kvstore.OpenConn(ctx, p.nc, kvstore.Config{Replicas: s.NATSReplicas, Origin: s.originDomain(), Logger: p.logger.With("component", "store")})
		return err
	})
	if err == nil {
		// The upgrade pass reads the whole store: an attempt's bound would
		// cut it, and every retry start it over, once the store outgrows
		// the bound (a start took 36 s at 400,000 subscriptions and
		// would never end at 1,000,000), so each attempt may take what is
		// left of the startup timeout.
		err = retryUntil(ctx, deadline, 0, p.logger, "KV store upgrade", ks.Upgrade)
	}
	if err == nil && s.isEdge() {
		err = p.startOnNewOriginLog(ctx, ks)
	}
	if err != nil {
		return fmt.Errorf("open KV store: %w", err)
	}
	p.store = ks
	return nil
}

// Bounds of one attempt of untilReady: the first is short, each next one
// twice as long, up to the last, which still leaves a loaded server seconds
// to answer while wasting at most that long on a request it dropped.
const (
	firstAttemptTimeout = time.Second
	lastAttemptTimeout  = 4 * time.Second
)

// untilReady calls open until it succeeds or timeout passes, backing off
// between attempts: a NATS cluster electing its JetStream leader or a Redis
// still starting is waited for, not fatal. The first attempts are short:
// NATS answers a JetStream API request only from the leader of the meta
// group or of the stream, and drops one that comes during an election (a
// fresh cluster's first second, a create racing another hub's), so waiting
// long for its answer only delays the attempt that would be answered.
func untilReady(ctx context.Context, timeout time.Duration, logger *slog.Logger, what string, open func(context.Context) error) error {
	return retryUntil(ctx, time.Now().Add(timeout), firstAttemptTimeout, logger, what, open)
}

// retryUntil calls open until it succeeds or the deadline passes, backing
// off between attempts; an attempt is bounded by attempt, doubling up to
// lastAttemptTimeout, or only by the deadline when attempt is 0.
func retryUntil(ctx context.Context, deadline time.Time, attempt time.Duration, logger *slog.Logger, what string, open func(context.Context) error) error {
	wait := 250 * time.Millisecond
	for {
		bound := deadline
		if attempt > 0 {
			bound = time.Now().Add(attempt)
			attempt = min(2*attempt, lastAttemptTimeout)
		}
		actx, cancel := context.WithDeadline(ctx, bound)
		err := open(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || errors.As(err, new(giveUp)) || time.Now().Add(wait).After(deadline) {
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

// giveUp is an error of an attempt of retryUntil that retrying cannot
// mend: it returns it at once.
type giveUp struct{ error }

func (g giveUp) Unwrap() error { return g.error }

// redactURL hides a password in a URL for logs.
func redactURL(raw string) string {
	if i := strings.Index(raw, "@"); i > 0 {
		if j := strings.Index(raw, "://"); j > 0 && j < i {
			return raw[:j+3] + "…@" + raw[i+1:]
		}
	}
	return raw
}
