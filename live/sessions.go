package live

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/access"
	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

// Defaults for Config.
const (
	DefaultSendQueue    = 256
	DefaultPingInterval = 30 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	// SinceTimeSlack is how far before since_time the hub starts scanning
	// by receipt time: a Source whose clock runs ahead of the hub's by
	// less than this still has every record with until after since_time
	// delivered.
	SinceTimeSlack = 10 * time.Minute
)

// Config configures the live sessions, over WebSocket and Server-Sent Events.
type Config struct {
	Log            hub.Log  // normally a *logcache.Cache
	AllowedOrigins []string // empty: same origin only; "*" allows any
	Token          string   // if set, clients send it as ?token= or Authorization: Bearer
	// Channels and Readers keep private channels (hub.Channel.Private)
	// from sessions without a token covering them (private.go); with
	// Channels nil every channel is served.
	Channels Channels
	Readers  *access.Verifier
	// Origin is where the hub's URLs for Mercure topics that are no URL
	// start (hub.Hub.MercureOrigin: the hub URL's scheme and authority, an
	// edge's origin hub's): the Mercure face reads the channel topics made
	// for them (wire.MercureTopicOf).
	Origin       string
	SendQueue    int           // live frames buffered per connection, default 256
	PingInterval time.Duration // default 30s; a client silent for 2× this is dropped
	WriteTimeout time.Duration // default 10s
	Tracer       trace.Tracer  // when set, a span of each live notification sent (trace.go)
	Logger       *slog.Logger
	// Refusals answers refused sessions through the hub's refusal table
	// and counts them.
	Refusals hub.Refusals
}

// Sessions is the live-session engine: sessions that replay the log from a
// cursor and then follow it live, written to a WebSocket connection
// (ServeHTTP) or a Server-Sent Events response (Events). Run's goroutine
// fans live records out to every caught-up session of either kind; each
// WebSocket session has a reader and a writer goroutine, each Server-Sent
// Events session its request's goroutine. The protocol is described in
// package wire.
type Sessions struct {
	cfg      Config
	upgrader websocket.Upgrader
	ready    chan struct{} // closed when the dispatcher knows its position
	count    atomic.Int64  // open WebSocket sessions
	sseCount atomic.Int64  // open Server-Sent Events sessions
	slow     atomic.Uint64
	rejected atomic.Uint64       // sessions closed for sending what the protocol does not allow
	done     sync.WaitGroup      // open sessions
	h        *loophealth.Tracker // the dispatcher's log calls that fail
	stalls   wsStalls            // sessions whose replay waits for the log
	mercure  mercureSubs         // open Mercure sessions, for the subscription API

	mu         sync.Mutex
	closed     bool
	sessions   map[*session]struct{}
	liveAll    map[*session]struct{}            // caught-up sessions of every channel
	liveBy     map[string]map[*session]struct{} // caught-up sessions by channel
	dispatched uint64                           // last sequence fanned out
	livePlain  int                              // live sessions without raw
	liveRaw    int                              // live sessions with raw
}

// New returns the live sessions reading cfg.Log. Run follows the log for
// them; a session opened before Run starts waits for it.
func New(cfg Config) *Sessions {
	if cfg.SendQueue <= 0 {
		cfg.SendQueue = DefaultSendQueue
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	ls := &Sessions{
		cfg:      cfg,
		h:        loophealth.New(cfg.Logger),
		stalls:   wsStalls{logger: cfg.Logger},
		ready:    make(chan struct{}),
		sessions: map[*session]struct{}{},
		liveAll:  map[*session]struct{}{},
		liveBy:   map[string]map[*session]struct{}{},
	}
	ls.upgrader = websocket.Upgrader{
		HandshakeTimeout: cfg.WriteTimeout,
		ReadBufferSize:   256,
		WriteBufferSize:  4096,
		WriteBufferPool:  &sync.Pool{},                             // write buffers only while writing
		CheckOrigin:      func(*http.Request) bool { return true }, // checked before upgrading
	}
	return ls
}

// WebSocketCount returns the number of open WebSocket sessions.
func (ls *Sessions) WebSocketCount() int { return int(ls.count.Load()) }

// EventsCount returns the number of open Server-Sent Events sessions.
func (ls *Sessions) EventsCount() int { return int(ls.sseCount.Load()) }

// SlowClosed returns how many sessions (of either kind) were closed as slow
// consumers: wire.CloseSlowConsumer, or the Server-Sent Events end event
// with that code.
func (ls *Sessions) SlowClosed() uint64 { return ls.slow.Load() }

// ProtocolClosed returns how many sessions were closed because their client
// sent something the protocol does not allow: a data message (binary, text
// that is not JSON, a JSON message, which no frame type defines) or one
// over the read limit.
func (ls *Sessions) ProtocolClosed() uint64 { return ls.rejected.Load() }

// Health reports whether the transport follows the log: false when the
// dispatcher that feeds live sessions, or the replay of a session, has been
// failing to read the log since since, with the latest error. Both retry
// by themselves with backoff, keeping their sessions open; Health is for
// readiness checks and dashboards. It does no I/O.
func (ls *Sessions) Health() (ok bool, since time.Time, err error) {
	ok, since, err = ls.h.State()
	sok, ssince, serr := ls.stalls.state()
	return loophealth.Worst(ok, since, err, sok, ssince, serr)
}

// wsRequest is a session's parsed query.
type wsRequest struct {
	all       bool
	channels  []string
	since     uint64
	epoch     string // the epoch of the since cursor, "" when it gave none
	hasSince  bool
	sinceTime time.Time // zero: none
	raw       bool
	filter    changefeed.Filter // entries the session wants; zero: all
	coalesce  bool              // replay the backlog coalesced (wire.ParamSessionCoalesce)
	grant     access.Grant      // what the session's token lets it read of private channels
	expires   time.Time         // when the token expires, if it admitted a private channel
	topics    *topicMatcher     // a Mercure subscription's matchers (mercure_query.go); nil: channels decide
	// mercureAfter is a Mercure subscription's Last-Event-ID when it is a
	// publisher's id rather than a cursor (resumeAfterID)
	mercureAfter string
}

// add registers a new session unless the transport is shut down.
func (ls *Sessions) add(s *session) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return false
	}
	ls.sessions[s] = struct{}{}
	s.counter.Add(1)
	ls.done.Add(1)
	return true
}

// remove forgets a finished session.
func (ls *Sessions) remove(s *session) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, ok := ls.sessions[s]; !ok {
		return
	}
	delete(ls.sessions, s)
	ls.leaveLocked(s)
	s.counter.Add(-1)
	ls.done.Done()
}

// Run follows the log for the live sessions until ctx ends; then it
// closes every session with CloseGoingAway and its resume cursor, refuses
// new ones, and returns once every session has ended (each within the
// write timeout, as its client takes the close or not). Call it once.
func (ls *Sessions) Run(ctx context.Context) error {
	ls.dispatch(ctx)
	ls.CloseSessions()
	ls.done.Wait()
	return nil
}

// CloseSessions refuses new sessions and closes every open one with
// CloseGoingAway and its resume cursor, without waiting for them to end.
// An http.Server's RegisterOnShutdown takes it: its Shutdown waits for
// Server-Sent Events responses, which end only when their sessions do.
func (ls *Sessions) CloseSessions() {
	ls.mu.Lock()
	ls.closed = true
	all := make([]*session, 0, len(ls.sessions))
	for s := range ls.sessions {
		all = append(all, s)
	}
	ls.mu.Unlock()
	for _, s := range all {
		s.close(wire.CloseGoingAway, "hub shutting down; resume with since=%d")
	}
}

// admit checks the origin (403) and the token (401), parses the query
// (400; for Server-Sent Events, events, a Last-Event-ID header takes the
// place of since and since_time) and refuses a session once the engine is
// shutting down (503). It answers a refused request itself.
func (ls *Sessions) admit(w http.ResponseWriter, r *http.Request, events bool) (wsRequest, bool) {
	if !ls.originAllowed(r) {
		ls.cfg.Refusals.Refuse(w, hub.ReasonOrigin, "origin not allowed")
		return wsRequest{}, false
	}
	if events {
		ls.allowOrigin(w, r)
	}
	if !ls.authorized(r) {
		ls.cfg.Refusals.Refuse(w, hub.ReasonSessionToken, "missing or wrong token")
		return wsRequest{}, false
	}
	req, err := parseWSQuery(r.URL.Query())
	if err != nil {
		ls.cfg.Refusals.Refuse(w, hub.ReasonSession, "%s", err.Error())
		return req, false
	}
	if id := r.Header.Get(wire.HeaderLastEventID); events && id != "" {
		c, err := wire.ParseCursor(strings.TrimSpace(id))
		if err != nil {
			ls.cfg.Refusals.Refuse(w, hub.ReasonSession, "%s: %v", wire.HeaderLastEventID, err)
			return req, false
		}
		req.since, req.epoch, req.hasSince, req.sinceTime = c.Seq, c.Epoch, true, time.Time{}
	}
	if !ls.admitPrivate(w, r, &req) {
		return req, false
	}
	return req, ls.admitOpen(w)
}

// admitOpen refuses a new session once the sessions are closed (the hub
// is shutting down); it reports whether the session may start.
func (ls *Sessions) admitOpen(w http.ResponseWriter) bool {
	ls.mu.Lock()
	closed := ls.closed
	ls.mu.Unlock()
	if closed {
		ls.cfg.Refusals.Refuse(w, hub.ReasonShuttingDown, "shutting down")
	}
	return !closed
}

// originAllowed applies AllowedOrigins; with none, the Origin must name the
// request's host (a request without Origin is not from a browser and
// passes).
func (ls *Sessions) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if len(ls.cfg.AllowedOrigins) == 0 {
		u, err := url.Parse(origin)
		return err == nil && strings.EqualFold(u.Host, r.Host)
	}
	for _, o := range ls.cfg.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// originNamed reports whether the request's Origin is one AllowedOrigins
// names (not one "*" lets in): only such an origin's page may send the
// browser's credentials (the mercureAuthorization cookie) across origins.
func (ls *Sessions) originNamed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	for _, o := range ls.cfg.AllowedOrigins {
		if o != "*" && strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return false
}

// authorized checks the token from the query or the Authorization header.
func (ls *Sessions) authorized(r *http.Request) bool {
	if ls.cfg.Token == "" {
		return true
	}
	got := r.URL.Query().Get(wire.ParamToken)
	if h := r.Header.Get("Authorization"); got == "" && len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		got = strings.TrimSpace(h[7:])
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(ls.cfg.Token)) == 1
}

// parseWSQuery reads channels, since, since_time, raw, prefix and change.
// Errors quote values clipped, for a 400 answer.
func parseWSQuery(q url.Values) (wsRequest, error) {
	var req wsRequest
	for _, k := range []string{wire.ParamChannels, wire.ParamSince, wire.ParamSinceTime, wire.ParamRaw, wire.ParamChange, wire.ParamSessionCoalesce} {
		if len(q[k]) > 1 {
			return req, fmt.Errorf("%s: given %d times, want once", k, len(q[k]))
		}
	}
	chans := q.Get(wire.ParamChannels)
	switch chans {
	case "":
		return req, errors.New("channels is required: a comma-separated list of channel names, or *")
	case wire.AllChannels:
		req.all = true
	default:
		if n := strings.Count(chans, ",") + 1; n > wire.MaxSessionChannels {
			return req, fmt.Errorf("channels: %d names, at most %d allowed (channels=* selects every channel)", n, wire.MaxSessionChannels)
		}
		seen := map[string]bool{}
		for _, c := range strings.Split(chans, ",") {
			if c = strings.TrimSpace(c); !hub.ValidChannelName(c) {
				return req, fmt.Errorf("channels: %s is not a channel name (1 to 64 of A-Z a-z 0-9 _ -)", wire.Clip(strconv.Quote(c)))
			}
			if !seen[c] {
				seen[c] = true
				req.channels = append(req.channels, c)
			}
		}
	}
	if s := q.Get(wire.ParamSince); s != "" {
		c, err := wire.ParseCursor(s)
		if err != nil {
			return req, fmt.Errorf("since: %w", err)
		}
		req.since, req.epoch, req.hasSince = c.Seq, c.Epoch, true
	}
	if s := q.Get(wire.ParamSinceTime); s != "" {
		if req.hasSince {
			return req, errors.New("give since or since_time, not both")
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return req, fmt.Errorf("since_time: %s is not an RFC 3339 date-time", wire.Clip(strconv.Quote(s)))
		}
		req.sinceTime = t
	}
	switch q.Get(wire.ParamRaw) {
	case "", "0", "false":
	case "1", "true":
		req.raw = true
	default:
		return req, errors.New("raw: want 1 or 0")
	}
	f, err := changefeed.ParseFilter(q[wire.ParamPrefix], q[wire.ParamChange])
	if err != nil {
		return req, err
	}
	req.filter = f
	switch q.Get(wire.ParamSessionCoalesce) {
	case "", "0", "false":
	case "1", "true":
		if req.all || len(req.channels) != 1 || (!req.hasSince && req.sinceTime.IsZero()) {
			return req, errors.New("coalesce: needs exactly one channel and since or since_time (runs are coalesced per channel, from a cursor)")
		}
		req.coalesce = true
	default:
		return req, errors.New("coalesce: want 1 or 0")
	}
	return req, nil
}
