package mirror

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/rshub/rshub/client/subscriber"
)

// ErrBusy is returned to a webhook delivery when the update queue stays
// full: the handler answers 503 and the hub retries later.
var ErrBusy = errors.New("mirror: busy catching up; retry later")

// Enqueue returns a subscriber.Config.OnNotification function that queues
// each delivery on updates for Run, waiting at most wait for room.
func Enqueue(updates chan<- Update, wait time.Duration) func(context.Context, *subscriber.Notification) error {
	return func(ctx context.Context, n *subscriber.Notification) error {
		u := UpdateOf(n.Document, 0, "webhook")
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case updates <- u:
			return nil
		case <-t.C:
			return ErrBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WebhookConfig configures RunWebhook.
type WebhookConfig struct {
	Listener net.Listener // where the callback server listens
	// CallbackURL is the callback server's public URL; default
	// http://<listener address>/callback.
	CallbackURL       string
	Lease             time.Duration // requested lease; 0: the hub's default
	UnsubscribeOnExit bool
	Resync            time.Duration // periodic catch-up; 0: never
}

// RunWebhook serves WebSub callbacks on cfg.Listener, subscribes to the
// topic with a random secret (reusing the subscription kept in the state
// file, so a restart keeps its callback URL), renews it before the lease
// ends and applies every delivery, until ctx ends. Config.Filter is sent
// as subscription parameters (the hub then delivers only the matching
// entries, with each notification's window) and applied here too. With
// UnsubscribeOnExit it unsubscribes before returning.
func (m *Mirror) RunWebhook(ctx context.Context, cfg WebhookConfig) error {
	callback := cfg.CallbackURL
	if callback == "" {
		callback = "http://" + cfg.Listener.Addr().String() + "/callback"
	}
	cu, err := url.Parse(callback)
	if err != nil {
		return fmt.Errorf("mirror: callback URL: %w", err)
	}
	updates := make(chan Update, 256)
	h, err := subscriber.New(subscriber.Config{
		Callback: callback, OnNotification: Enqueue(updates, 5*time.Second), Logger: m.cfg.Logger, Client: m.cfg.Client,
		OnDenied: func(_ subscriber.Subscription, reason string) {
			m.emit(Event{Kind: EventWarning, Message: "the hub denied the subscription: " + reason})
		},
	})
	if err != nil {
		return err
	}
	path := cu.Path
	path = cmp.Or(path, "/")
	mux := http.NewServeMux()
	mux.Handle(path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(cfg.Listener) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	opt := subscriber.SubscribeOptions{Lease: cfg.Lease, Filter: m.cfg.Filter}
	if prev := m.State().Subscription; reusable(prev, h, m.cfg.Hub, m.cfg.Topic) {
		h.Restore(*prev)
		opt.ID, opt.Secret = prev.ID, prev.Secret
	} else if prev != nil && prev.Hub == m.cfg.Hub && prev.Topic == m.cfg.Topic {
		m.emit(Event{Kind: EventWarning, Message: fmt.Sprintf("the state file's subscription is for callback %s, not %s: subscribing anew "+
			"(the hub ends the old one when its lease does, %s)", prev.Callback, h.CallbackFor(prev.ID), prev.Expires().Format(time.RFC3339))})
	}
	var sub subscriber.Subscription
	err = m.retry(ctx, "subscribe", func() error {
		var err error
		sub, err = h.Subscribe(ctx, m.cfg.Hub, m.cfg.Topic, opt)
		var he *subscriber.HubError
		if subscriber.IsDenied(err) || (errors.As(err, &he) && he.Status/100 == 4) {
			return permanent{err}
		}
		return err
	})
	var pe permanent
	if errors.As(err, &pe) {
		return pe.error
	}
	if err != nil {
		return err
	}
	if err := m.SetSubscription(&sub); err != nil {
		return err
	}
	m.emit(Event{Kind: EventInfo, Message: fmt.Sprintf("subscribed %s (lease %s)", sub.Callback, sub.Lease)})

	kctx, stopKeep := context.WithCancel(ctx)
	defer stopKeep()
	go func() {
		err := h.KeepAlive(kctx, sub.ID, cfg.Lease, func(ns subscriber.Subscription) { _ = m.SetSubscription(&ns) })
		if err != nil && kctx.Err() == nil {
			m.emit(Event{Kind: EventWarning, Message: "subscription not renewed: " + err.Error()})
		}
	}()
	unsubFramework := m.subscribeFramework(kctx, h, cfg.Lease)
	err = m.Run(ctx, updates, cfg.Resync)
	if cfg.UnsubscribeOnExit && unsubFramework != nil {
		uctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		unsubFramework(uctx)
	}
	if cfg.UnsubscribeOnExit {
		uctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if uerr := h.Unsubscribe(uctx, sub.ID, 10*time.Second); uerr != nil {
			m.emit(Event{Kind: EventWarning, Message: "unsubscribe failed: " + uerr.Error()})
		} else {
			_ = m.SetSubscription(nil)
			m.emit(Event{Kind: EventInfo, Message: "unsubscribed"})
		}
	}
	return err
}

// reusable reports whether the subscription kept in the state file is
// this run's: the same hub and topic, and the callback URL this run
// serves. A subscription made by a run on another callback address is
// never renewed here: the hub would keep delivering to that address.
func reusable(prev *subscriber.Subscription, h *subscriber.Handler, hub, topic string) bool {
	return prev != nil && prev.Hub == hub && prev.Topic == topic && prev.Callback == h.CallbackFor(prev.ID)
}

// permanent marks an error retrying cannot fix.
type permanent struct{ error }
