package live_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// One exp rule at both ends: a token past its exp, even by a second, is
// refused at the handshake (401, "expired"), as a session it admitted ends
// at exp; no session is opened only to be ended at once.
func TestPrivate_TokenPastExpRefusedAtHandshake(t *testing.T) {
	e, _, k := privateWSEnv(t)
	e.append(hubtest.Record("secret", 1))
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topicOf("secret")}, nil, time.Now().Add(-2*time.Second).Unix(), 0))
	q := query("channels", "secret", "since", "0", "authorization", tok)
	_, resp, err := e.dial(q, nil, 0)
	if err == nil || statusOf(resp) != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "expired") {
		t.Fatalf("WebSocket with a token 2 s past exp: %v %d, want 401 expired", err, statusOf(resp))
	}
	if _, err := e.openEvents("", q, nil, 0); err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Fatalf("events with a token 2 s past exp: %v, want 401", err)
	}
}

// gatedBounds is a log whose Bounds waits for its caller's context to end
// while gate is set: a session's replay that cannot start.
type gatedBounds struct {
	hub.Log
	gate atomic.Bool
}

func (l *gatedBounds) Bounds(ctx context.Context) (uint64, uint64, error) {
	if l.gate.Load() {
		<-ctx.Done()
		return 0, 0, ctx.Err()
	}
	return l.Log.Bounds(ctx)
}

func (l *gatedBounds) Epoch() string { return l.Log.(interface{ Epoch() string }).Epoch() }

// A session that ends before its replay starts (here its token expires
// while the log does not answer) tells the client the cursor it came with,
// in the Server-Sent Events end event and the WebSocket close alike, never
// since=0 (which would replay the whole log).
func TestSession_EndBeforeReplayNamesTheClientsCursor(t *testing.T) {
	k := accesstest.NewSecret(t)
	chans := &channelSet{m: map[string]hub.Channel{"secret": {Name: "secret", Topic: topicOf("secret"), Private: true}}}
	var view *gatedBounds
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{Channels: chans, Readers: laggingVerifier(t, k), PingInterval: time.Hour},
		over: func(l hub.Log) hub.Log { view = &gatedBounds{Log: l}; return view }})
	last := e.append(hubtest.Record("secret", 1))
	e.append(hubtest.Record("secret", 2))
	view.gate.Store(true)
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topicOf("secret")}, nil, time.Now().Add(2*time.Second).Unix(), 0))
	q := query("channels", "secret", "since", e.id(last))
	events := e.mustOpenEvents(q, http.Header{"Cookie": {"mercureAuthorization=" + tok}})
	conn, resp, err := e.dial(q+"&authorization="+tok, nil, 0)
	if err != nil {
		t.Fatalf("%v (%d)", err, statusOf(resp))
	}
	evs := events.rest()
	if len(evs) == 0 {
		t.Fatal("no end event")
	}
	end := evs[len(evs)-1]
	if end.Type != wire.EventEnd || end.end.Code != wire.CloseTokenExpired || end.end.Since != last {
		t.Fatalf("end event %+v, want code %d since %d", end.end, wire.CloseTokenExpired, last)
	}
	ce, _ := closeError(t, conn)
	if ce.Code != wire.CloseTokenExpired || !strings.Contains(ce.Text, fmt.Sprintf("since=%d ", last)) {
		t.Fatalf("close %d %q, want %d naming since %d", ce.Code, ce.Text, wire.CloseTokenExpired, last)
	}
}

// CORS: an Origin --ws-origins names gets Access-Control-Allow-Credentials
// (an EventSource withCredentials sends the mercureAuthorization cookie),
// with its own origin echoed; an origin let in by "*" never does.
func TestEvents_CredentialsOnlyForNamedOrigins(t *testing.T) {
	for _, c := range []struct {
		allowed []string
		origin  string
		creds   bool
	}{
		{[]string{"https://app.example"}, "https://app.example", true},
		{[]string{"https://app.example/"}, "https://APP.example", true},
		{[]string{"*"}, "https://any.example", false},
		{[]string{"*", "https://app.example"}, "https://other.example", false},
	} {
		e := newWSEnv(t, wsEnvOpts{ws: live.Config{AllowedOrigins: c.allowed}})
		hdr := http.Header{"Origin": {c.origin}}
		ev, err := e.openEvents("", query("channels", "*"), hdr, 0)
		if err != nil {
			t.Fatalf("%v %s: %v", c.allowed, c.origin, err)
		}
		h := ev.resp.Header
		ev.close()
		req, _ := http.NewRequest(http.MethodOptions, e.srv.URL+wire.PathEvents+"?channels=*", nil)
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for what, got := range map[string]http.Header{"GET": h, "preflight": resp.Header} {
			if got.Get("Access-Control-Allow-Origin") != c.origin {
				t.Errorf("%v %s %s: Access-Control-Allow-Origin %q, want the origin echoed", c.allowed, c.origin, what, got.Get("Access-Control-Allow-Origin"))
			}
			if creds := got.Get("Access-Control-Allow-Credentials") == "true"; creds != c.creds {
				t.Errorf("%v %s %s: credentials %v, want %v", c.allowed, c.origin, what, creds, c.creds)
			}
		}
	}
}
