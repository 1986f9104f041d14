package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// An edge with --open-topics that is asked for a topic nobody named
// creates its channel at the origin the way any client of an
// --open-topics origin can: a thin ping (hub.mode=publish&hub.url=topic)
// to the origin's hub URL, which creates the channel there (and fetches
// the topic, as for every thin ping). The channel comes back through the
// edge's mirror of the origin's channels, which the edge waits for. The
// edge never writes the origin's buckets: its leaf link may not. An origin
// without --open-topics refuses the ping, and the edge answers as the
// origin would: the topic is not served.

// originTopicWait bounds how long an edge waits for a channel the origin
// created to reach its mirror of the origin's channels.
const originTopicWait = 15 * time.Second

// originTopicPoll is the first pause between looks at the mirror; each
// next one is twice as long, up to a second.
const originTopicPoll = 50 * time.Millisecond

// channelReader is the part of an edge's store originTopics reads.
type channelReader interface {
	Channel(ctx context.Context, topic string) (hub.Channel, error)
}

// originTopics creates open topics' channels at an edge's origin
// (hub.Config.OpenElsewhere).
type originTopics struct {
	upstream string // the origin's hub URL
	client   *http.Client
	store    channelReader
	wait     time.Duration
}

func newOriginTopics(upstream string, store channelReader) *originTopics {
	return &originTopics{
		upstream: upstream,
		store:    store,
		wait:     originTopicWait,
		client: &http.Client{
			Timeout: 60 * time.Second, // the origin fetches the topic before it answers
			Transport: &http.Transport{
				DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
				ResponseHeaderTimeout: 60 * time.Second,
				MaxIdleConnsPerHost:   8,
				IdleConnTimeout:       90 * time.Second,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Open asks the origin to create topic's channel and waits until the
// edge's mirror has it; an error wrapping hub.ErrNotFound when the origin
// refuses the topic.
func (o *originTopics) Open(ctx context.Context, topic string) error {
	created, err := o.ping(ctx, topic)
	if err != nil {
		return err
	}
	if !created {
		return fmt.Errorf("the origin %s does not open topic %s: %w", o.upstream, wire.Clip(topic), hub.ErrNotFound)
	}
	wctx, cancel := context.WithTimeout(ctx, o.wait)
	defer cancel()
	pause := originTopicPoll
	for {
		_, err := o.store.Channel(wctx, topic)
		if err == nil {
			return nil
		}
		if !errors.Is(err, hub.ErrNotFound) && wctx.Err() == nil {
			return fmt.Errorf("the origin's channel for %s: %w", wire.Clip(topic), err)
		}
		t := time.NewTimer(pause)
		select {
		case <-wctx.Done():
			t.Stop()
			return fmt.Errorf("the origin %s created the channel of %s, but this edge's mirror of its channels did not have it within %v (is the leaf link up?)",
				o.upstream, wire.Clip(topic), o.wait)
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}

// ping sends the origin a thin ping to topic and reports whether the
// origin has the topic's channel now: it answered 2xx; 502, its fetch of
// the topic failed (after it created the channel); or 409, the channel
// is one the origin follows. Any other 4xx: the origin refuses the topic
// (no --open-topics, a topic it refuses, a private channel). Other
// answers and no answer are errors.
func (o *originTopics) ping(ctx context.Context, topic string) (bool, error) {
	form := url.Values{"hub.mode": {"publish"}, "hub.url": {topic}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.upstream, strings.NewReader(form.Encode()))
	if err != nil {
		return false, fmt.Errorf("--upstream: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := o.client.Do(req)
	if err != nil {
		return false, fmt.Errorf("creating the channel of %s at the origin %s: %w", wire.Clip(topic), o.upstream, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch c := resp.StatusCode; {
	case c/100 == 2, c == http.StatusBadGateway, c == http.StatusConflict:
		return true, nil
	case c/100 == 4 && c != http.StatusTooManyRequests:
		return false, nil
	default:
		return false, fmt.Errorf("creating the channel of %s at the origin %s: %s: %s", wire.Clip(topic), o.upstream, resp.Status, wire.Clip(strings.TrimSpace(string(body))))
	}
}
