package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
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
	release, err := lockDir(s)
	if err != nil {
		return err
	}
	defer release()
	if s.ListDatasets || s.Dataset != "" {
		return runDatasets(ctx, s, client, logger, p, stdout)
	}
	if s.Atom != "" {
		return runAtom(ctx, s, client, logger, stdout)
	}

	hub, topic, resourceList := s.Hub, s.Topic, s.ResourceList
	if s.Source != "" {
		ch, err := chooseChannel(ctx, client, s.Source, s.Topic)
		if err != nil {
			return err
		}
		hub, topic = ch.Hub, ch.Topic
		resourceList = cmp.Or(resourceList, ch.Capabilities[changefeed.CapResourceList])
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
		hubCL = cmp.Or(hubCL, cl)
		channel = cmp.Or(channel, name)
	}
	m, err := mirror.Open(mirror.Config{
		Dir: s.Mirror, StatePath: s.State, BaseURL: s.BaseURL, Hub: hub, Topic: topic,
		HubCapabilityList: hubCL, ResourceList: resourceList, Client: client, Logger: logger, Events: p.event,
		Filter: s.Filter, Framework: s.Framework,
	})
	if err != nil {
		return err
	}
	switch s.Transport {
	case "websocket", "sse":
		if channel == "" {
			return fmt.Errorf("--channel is required for --transport %s (the hub's Capability List URL does not tell it)", s.Transport)
		}
		cfg := mirror.WebSocketConfig{Hub: hub, Channel: channel, Token: s.WSToken}
		if s.Transport == "sse" {
			return m.RunSSE(ctx, cfg)
		}
		return m.RunWebSocket(ctx, cfg)
	case "nats":
		if channel == "" {
			return errors.New("--channel is required for --transport nats")
		}
		return m.RunNATS(ctx, mirror.NATSConfig{URL: s.NATSURL, Stream: s.NATSStream, Prefix: s.NATSPrefix, Channel: channel})
	}
	ln, err := net.Listen("tcp", s.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	return m.RunWebhook(ctx, mirror.WebhookConfig{Listener: ln, CallbackURL: s.CallbackURL, Lease: s.Lease, UnsubscribeOnExit: s.unsubscribeOnExit(), Resync: s.Resync})
}

// chooseChannel discovers the channels behind source and returns the one
// whose topic is topic, or the only one when topic is empty: a Source or
// hub announcing several is never followed at random.
func chooseChannel(ctx context.Context, client *http.Client, source, topic string) (subscriber.Channel, error) {
	all, err := subscriber.DiscoverAll(ctx, client, source)
	if err != nil {
		return subscriber.Channel{}, err
	}
	if topic == "" && len(all) == 1 {
		return all[0], nil
	}
	topics := make([]string, len(all))
	for i, ch := range all {
		if topic != "" && ch.Topic == topic {
			return ch, nil
		}
		topics[i] = "\n  " + ch.Topic
	}
	if topic != "" {
		return subscriber.Channel{}, fmt.Errorf("discovery from %s found no topic %s; the topics found:%s", source, topic, strings.Join(topics, ""))
	}
	return subscriber.Channel{}, fmt.Errorf("discovery from %s found %d channels: choose one with --topic:%s", source, len(all), strings.Join(topics, ""))
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
