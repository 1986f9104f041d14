package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/client/subscriber"
)

// run is the whole command: settings, discovery, mirror and transport.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) error {
	s, err := parseSettings(args, lookup, stderr)
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(s.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	p := &printer{out: stdout, json: s.JSON, bar: s.Progress == "bar" || (s.Progress == "auto" && isTerminal(stdout))}
	client := &http.Client{Timeout: 60 * time.Second}

	hub, topic, resourceList := s.Hub, s.Topic, s.ResourceList
	if s.Source != "" {
		ch, err := subscriber.Discover(ctx, client, s.Source)
		if err != nil {
			return err
		}
		hub, topic = ch.Hub, ch.Topic
		if resourceList == "" {
			resourceList = ch.Capabilities[changefeed.CapResourceList]
		}
		p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventInfo, Loc: s.Source, Message: "discovered topic " + topic + " on hub " + hub})
	}
	if resourceList == "off" {
		resourceList = ""
	}
	hubCL, channel := s.HubCapabilityList, s.Channel
	if hubCL == "" || (channel == "" && s.Transport != "webhook") {
		cl, name, err := mirror.HubChannel(ctx, client, hub, topic)
		if err != nil {
			return err
		}
		if hubCL == "" {
			hubCL = cl
		}
		if channel == "" {
			channel = name
		}
	}
	m, err := mirror.Open(mirror.Config{
		Dir: s.Mirror, StatePath: s.State, BaseURL: s.BaseURL, Hub: hub, Topic: topic,
		HubCapabilityList: hubCL, ResourceList: resourceList, Client: client, Logger: logger, Events: p.event,
	})
	if err != nil {
		return err
	}
	switch s.Transport {
	case "websocket":
		if channel == "" {
			return errors.New("--channel is required for --transport websocket (the hub's Capability List URL does not tell it)")
		}
		return m.RunWebSocket(ctx, mirror.WebSocketConfig{Hub: hub, Channel: channel, Token: s.WSToken})
	case "nats":
		if channel == "" {
			return errors.New("--channel is required for --transport nats")
		}
		return m.RunNATS(ctx, mirror.NATSConfig{URL: s.NATSURL, Stream: s.NATSStream, Prefix: s.NATSPrefix, Channel: channel})
	}
	return runWebhook(ctx, s, m, hub, topic, logger, p)
}

// runWebhook serves the callback, subscribes (reusing the subscription in
// the state file), keeps the lease alive and applies deliveries.
func runWebhook(ctx context.Context, s settings, m *mirror.Mirror, hub, topic string, logger *slog.Logger, p *printer) error {
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	callback := s.CallbackURL
	if callback == "" {
		callback = "http://" + ln.Addr().String() + "/callback"
	}
	cu, err := url.Parse(callback)
	if err != nil {
		return fmt.Errorf("--callback-url: %w", err)
	}
	updates := make(chan mirror.Update, 256)
	h, err := subscriber.New(subscriber.Config{
		Callback: callback, OnNotification: mirror.Enqueue(updates, 5*time.Second), Logger: logger,
		OnDenied: func(sub subscriber.Subscription, reason string) {
			p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventWarning, Message: "the hub denied the subscription: " + reason})
		},
	})
	if err != nil {
		return err
	}
	path := cu.Path
	if path == "" {
		path = "/"
	}
	mux := http.NewServeMux()
	mux.Handle(path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	opt := subscriber.SubscribeOptions{Lease: s.Lease}
	if prev := m.State().Subscription; prev != nil && prev.Hub == hub && prev.Topic == topic {
		h.Restore(*prev)
		opt.ID, opt.Secret = prev.ID, prev.Secret
	}
	var sub subscriber.Subscription
	for n := 1; ; n++ {
		if sub, err = h.Subscribe(ctx, hub, topic, opt); err == nil {
			break
		}
		if subscriber.IsDenied(err) || ctx.Err() != nil {
			return err
		}
		var he *subscriber.HubError
		if errors.As(err, &he) && he.Status/100 == 4 {
			return err
		}
		p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventWarning, Message: "subscribe failed, retrying: " + err.Error()})
		t := time.NewTimer(min(time.Duration(n)*time.Second, 30*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if err := m.SetSubscription(&sub); err != nil {
		return err
	}
	p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventInfo, Message: fmt.Sprintf("subscribed %s (lease %s)", sub.Callback, sub.Lease)})

	kctx, stopKeep := context.WithCancel(ctx)
	defer stopKeep()
	go func() {
		err := h.KeepAlive(kctx, sub.ID, s.Lease, func(ns subscriber.Subscription) {
			_ = m.SetSubscription(&ns)
		})
		if err != nil && kctx.Err() == nil {
			p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventWarning, Message: "subscription not renewed: " + err.Error()})
		}
	}()
	err = m.Run(ctx, updates, s.Resync)
	if s.UnsubscribeOnExit {
		uctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if uerr := h.Unsubscribe(uctx, sub.ID, 10*time.Second); uerr != nil {
			logger.Warn("unsubscribe failed", "err", uerr)
		} else {
			_ = m.SetSubscription(nil)
			p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventInfo, Message: "unsubscribed"})
		}
	}
	return err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
