package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/wire"
)

// An edge hub (Config.Upstream) serves an origin hub's history close to
// its subscribers. Its NATS server is a leaf node of the origin's, in a
// JetStream domain of its own; its log is a JetStream mirror of the
// origin's (jslog.Config.Upstream), so sequences, cursors and epochs are
// the origin's. Everything else is the edge's own: channels, subscriptions,
// webhook delivery, live sessions, pull-mode documents. It never appends:
// publishes are forwarded to the origin's hub URL (Mercure publishes to
// its Mercure face) and the origin's answer
// is the Source's (200 once the origin's log has the notification). With
// the origin unreachable, publishes are refused with 503 and Retry-After,
// /readyz says since when the mirror is stale, and the rest serves on.

// JetStream domains given when Config.NATSDomain is empty.
const (
	DefaultDomain     = "rshub" // an origin's (a hub with --leaf-listen)
	DefaultEdgeDomain = "edge"  // an edge's
)

// publishRetryAfter is the Retry-After, in seconds, of a publish refused
// while the origin is unreachable.
const publishRetryAfter = "5"

// maxPublishForm bounds a form read to tell a publish ping from a
// subscription request (as the hub bounds its forms).
const maxPublishForm = 64 << 10

func (s Config) isEdge() bool { return s.Upstream != "" }

// natsDomain is the embedded NATS server's JetStream domain: the one set,
// else the default of an edge or of an origin, else none (a hub neither
// links nor is linked to).
func (s Config) natsDomain() string {
	switch {
	case s.NATSDomain != "":
		return s.NATSDomain
	case s.isEdge():
		return DefaultEdgeDomain
	case s.LeafListen != "off":
		return DefaultDomain
	}
	return ""
}

// checkEdge refuses edge and leaf settings that cannot work together.
func (s Config) checkEdge() error {
	for flag, d := range map[string]string{"--nats-domain": s.NATSDomain, "--upstream-domain": s.UpstreamDomain} {
		if d != "" && !validDomain(d) {
			return fmt.Errorf("%s must be 1-64 characters of A-Z a-z 0-9 - _, got %q", flag, wire.Clip(d))
		}
	}
	switch {
	case s.LeafListen != "off" && s.NATSURL != "":
		return errors.New("--leaf-listen applies to the embedded NATS server; configure leafnodes on the external server instead")
	case s.UpstreamLeaf != "" && !s.isEdge():
		return errors.New("--upstream-leaf needs --upstream (the origin's hub URL)")
	case !s.isEdge():
		return nil
	}
	u, err := url.Parse(s.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("--upstream must be the origin's hub URL, an absolute http(s) URL without user info, got %q", wire.Clip(s.Upstream))
	}
	switch {
	case s.NATSURL == "" && s.UpstreamLeaf == "":
		return errors.New("--upstream needs --upstream-leaf, the origin's leaf node URL (nats-leaf://host:port, the origin's --leaf-listen)")
	case s.NATSURL != "" && s.UpstreamLeaf != "":
		return errors.New("--upstream-leaf applies to the embedded NATS server; link the external server to the origin in its own leafnodes configuration")
	case s.natsDomain() == s.UpstreamDomain:
		return fmt.Errorf("--nats-domain %q is the origin's (--upstream-domain): an edge needs a JetStream domain of its own", s.UpstreamDomain)
	case s.ChannelsFile != "":
		return fmt.Errorf("--channels %s: an edge hub takes its channels from its origin (%s) and has none of its own: give the file to the origin hub, and start the edge without --channels", s.ChannelsFile, s.Upstream)
	case s.RedisURL != "":
		return errors.New("--redis-url: an edge hub keeps its state in its NATS server, beside its mirrors of the origin's log and channels; start the edge without --redis-url")
	}
	if s.UpstreamLeaf == "" {
		return nil
	}
	for _, leaf := range strings.Split(s.UpstreamLeaf, ",") {
		if l, err := url.Parse(strings.TrimSpace(leaf)); err != nil || l.Host == "" {
			return fmt.Errorf("--upstream-leaf must be URLs such as nats-leaf://host:7422, comma-separated, got %q", wire.Clip(s.UpstreamLeaf))
		}
	}
	return nil
}

// validDomain reports whether d can be a JetStream domain: one subject
// token of at most 64 letters, digits, '-' and '_'.
func validDomain(d string) bool {
	if len(d) == 0 || len(d) > 64 {
		return false
	}
	for _, c := range d {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// edgeChannelsRefusal is what the admin API answers an edge's channel
// writes: the channels are the origin's, changed at the origin.
func (s Config) edgeChannelsRefusal() string {
	if !s.isEdge() {
		return ""
	}
	return "this is an edge hub: its channels are its origin's, mirrored from " + s.Upstream + "; create, change and delete them through the origin's admin API"
}

// originChannels is an edge's store: its channels are a mirror of the
// origin's (kvstore.Config.Origin).
type originChannels interface {
	OriginChannels(ctx context.Context) (kvstore.OriginState, error)
}

// linkProbe is the readiness of an edge's link to its origin: degraded,
// with since when the mirror is stale, while the origin is not heard from;
// not ready either until the origin's channels were mirrored once since
// the edge started (an edge answers subscriptions from them).
func (p *process) linkProbe() probe {
	var channelsHeard atomic.Bool
	var epochMu sync.Mutex
	var epochAsked time.Time // zero: ask at once
	wasUp := false
	return probe{"upstream", func(ctx context.Context) error {
		st, err := p.notifications.Link(ctx)
		if err != nil {
			return err
		}
		epochMu.Lock()
		if st.Up && !wasUp {
			epochAsked = time.Time{} // the link is back: the origin may be another since
		}
		wasUp = st.Up
		epochMu.Unlock()
		if st.Up {
			epochMu.Lock()
			news := p.checkOriginEpoch(ctx, time.Now(), &epochAsked)
			epochMu.Unlock()
			if news != nil {
				p.restart(news)
				return degradedError{news}
			}
		}
		oc, ok := p.store.(originChannels)
		if !ok {
			return errors.New("the store does not mirror the origin's channels")
		}
		cs, err := oc.OriginChannels(ctx)
		if err != nil {
			return err
		}
		if cs.Heard {
			channelsHeard.Store(true)
		}
		switch {
		case !st.Up:
			return degradedError{staleReason(st, p.cfg.UpstreamDomain, cs.Channels)}
		case !channelsHeard.Load():
			why := ""
			if cs.Err != "" {
				why = " (" + cs.Err + "; the origin keeps its channels in JetStream KV, not with --redis-url)"
			}
			return degradedError{fmt.Errorf("starting: the origin's channels (JetStream domain %s) not mirrored yet%s", p.cfg.UpstreamDomain, why)}
		}
		return nil
	}}
}

// staleReason says how stale the mirror is and why; channels is how many
// entries the mirror of the origin's channels holds.
func staleReason(st jslog.LinkState, domain string, channels uint64) error {
	why := ""
	if st.Err != "" {
		why = " (" + st.Err + ")"
	}
	serving := fmt.Sprintf("serving the log up to sequence %d and the origin's channels as last mirrored (%d entries)", st.Last, channels)
	if st.Since.IsZero() {
		return fmt.Errorf("stale: the origin (JetStream domain %s) not reached since this edge's NATS server started%s; %s", domain, why, serving)
	}
	return fmt.Errorf("stale since %s: the link to the origin (JetStream domain %s) is down%s; %s",
		st.Since.UTC().Format(time.RFC3339), domain, why, serving)
}

// upstreamIntake is an edge's hub URL: publishes (fat pings, publish
// pings) go to the origin's hub URL, Mercure publishes (POST
// wire.PathMercure) to the origin's Mercure face, which maps raw topics
// with its own origin and checks tokens by its own rules; everything else
// goes to the edge's own routes.
type upstreamIntake struct {
	path    string // the edge's hub URL path
	maxBody int64
	proxy   *httputil.ReverseProxy
	next    http.Handler
	// refusals answers what the forwarder refuses itself.
	refusals hub.Refusals
}

// newUpstreamIntake forwards the publishes that reach hubPath to the
// origin at upstream and passes the rest to next.
func newUpstreamIntake(hubURL, upstream string, maxBody int64, next http.Handler, rf hub.Refusals, logger *slog.Logger) (*upstreamIntake, error) {
	origin, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("--upstream: %w", err)
	}
	own, err := url.Parse(hubURL)
	if err != nil {
		return nil, fmt.Errorf("hub URL: %w", err)
	}
	hubPath := own.Path
	hubPath = cmp.Or(hubPath, "/")
	// a Source names the hub it publishes to as rel="hub"; the origin
	// takes its own URL there
	relink := strings.NewReplacer("<"+hubURL+">", "<"+upstream+">")
	transport := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *origin
			if pr.In.URL.Path == wire.PathMercure { // the origin's Mercure face
				u = url.URL{Scheme: origin.Scheme, Host: origin.Host, Path: wire.PathMercure}
			}
			pr.Out.URL, pr.Out.Host = &u, ""
			for i, v := range pr.Out.Header.Values("Link") {
				pr.Out.Header["Link"][i] = relink.Replace(v)
			}
			pr.SetXForwarded()
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				rf.Refuse(w, hub.ReasonTooLarge, "the notification is larger than %d bytes", maxBody)
				return
			}
			logger.Warn("publish not forwarded: the origin did not answer", "origin", upstream, "err", err)
			w.Header().Set("Retry-After", publishRetryAfter)
			rf.Refuse(w, hub.ReasonUpstream, "this is an edge hub and its origin %s did not answer: the notification was not published; publish it again later", upstream)
		},
	}
	return &upstreamIntake{path: hubPath, maxBody: maxBody, proxy: proxy, next: next, refusals: rf}, nil
}

func (u *upstreamIntake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == wire.PathMercure {
		r.Body = http.MaxBytesReader(w, r.Body, u.maxBody)
		u.proxy.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != u.path {
		u.next.ServeHTTP(w, r)
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/xml", "text/xml":
		r.Body = http.MaxBytesReader(w, r.Body, u.maxBody)
		u.proxy.ServeHTTP(w, r)
	case "application/x-www-form-urlencoded":
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPublishForm+1))
		if err != nil {
			u.refusals.Refuse(w, hub.ReasonRead, "reading the form: %v", err)
			return
		}
		if len(body) > maxPublishForm {
			u.refusals.Refuse(w, hub.ReasonTooLarge, "the form is larger than %d bytes", maxPublishForm)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("hub.mode") == "publish" {
			u.proxy.ServeHTTP(w, r)
			return
		}
		u.next.ServeHTTP(w, r) // subscriptions, and forms the hub refuses itself
	default:
		u.next.ServeHTTP(w, r)
	}
}

// originDomain is the origin's JetStream domain at an edge (whose
// channels are the origin's), "" at any other hub.
func (s Config) originDomain() string {
	if !s.isEdge() {
		return ""
	}
	return s.UpstreamDomain
}
