package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// leafCheckGrace is how long an edge's first start waits for its origin's
// leaf node listener before it gives up, saying what the origin needs:
// long enough for an origin started at the same time to open it.
const leafCheckGrace = 10 * time.Second

// linkCheck tells why an edge's first start does not reach its origin's
// log (a JetStream request over the leaf link answered "no responders"),
// and gives up early when the answer will not come by waiting: nothing
// accepts connections at the origin's leaf URL (an origin without
// --leaf-listen), or the link is up but the origin's JetStream domain does
// not answer over it.
type linkCheck struct {
	leaves []string // host:port of each --upstream-leaf URL; none at a hub that is no edge with an embedded link
	domain string
	since  time.Time // the first start's beginning
}

func newLinkCheck(s Config, now time.Time) *linkCheck {
	c := &linkCheck{domain: s.UpstreamDomain, since: now}
	if !s.isEdge() || s.UpstreamLeaf == "" {
		return c
	}
	for _, l := range strings.Split(s.UpstreamLeaf, ",") {
		if u, err := url.Parse(strings.TrimSpace(l)); err == nil && u.Host != "" {
			host := u.Host
			if u.Port() == "" {
				host = net.JoinHostPort(u.Hostname(), "7422") // the leaf node port NATS dials by default
			}
			c.leaves = append(c.leaves, host)
		}
	}
	return c
}

// explain returns err, which opening the log returned at now, with what
// the operator should look at when it is the origin not answering over
// the link; wrapped in giveUp once that has lasted leafCheckGrace.
func (c *linkCheck) explain(ctx context.Context, err error, now time.Time) error {
	if err == nil || len(c.leaves) == 0 || !errors.Is(err, nats.ErrNoResponders) {
		return err
	}
	var refused []string
	var why error
	for _, addr := range c.leaves {
		conn, derr := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if derr != nil {
			refused, why = append(refused, addr), derr
			continue
		}
		_ = conn.Close()
	}
	var e error
	if len(refused) == len(c.leaves) {
		e = fmt.Errorf("nothing accepts the leaf node link at %s (%v): the origin hub must take edges' links there, started with --leaf-listen %s (or, on an external NATS server, a leafnodes listener and a JetStream domain %s); --upstream-leaf names where: %w",
			strings.Join(refused, ", "), why, c.leaves[0], c.domain, err)
	} else {
		e = fmt.Errorf("the leaf node link to the origin is accepted, but JetStream domain %q does not answer over it: give --upstream-domain the origin's --nats-domain (default %s), and check that --upstream-leaf is the origin's --leaf-listen: %w",
			c.domain, DefaultDomain, err)
	}
	if now.Sub(c.since) >= leafCheckGrace {
		return giveUp{e}
	}
	return e
}
