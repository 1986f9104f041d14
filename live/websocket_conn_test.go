package live_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// TestWebSocket_SlowConsumerClosedWith4008 lets a client stop reading while
// records keep coming: its queue fills, the hub closes it with 4008 and a
// reason naming the last sequence it was sent, and that is exactly the last
// notification the client finds when it reads again.
func TestWebSocket_SlowConsumerClosedWith4008(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{
		ws:         live.Config{SendQueue: 4, WriteTimeout: wsTimeout},
		sndBufSize: 4096,
	})
	c, _, err := e.dial(query("channels", "*", "raw", "1"), nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	live := read(t, c)
	if live.Type != "live" {
		t.Fatalf("first frame %+v, want live", live)
	}
	first := uint64(0)
	for i := 0; e.ws.SlowClosed() == 0; i++ {
		if i == 2000 {
			t.Fatal("2000 records and the session is not closed as slow")
		}
		rec := hubtest.Record("a", i+1)
		rec.Body = append(rec.Body, bytes.Repeat([]byte(" "), 4000)...)
		seq := e.append(rec)
		if first == 0 {
			first = seq
		}
	}
	ce, frames := closeError(t, c)
	if ce.Code != wire.CloseSlowConsumer {
		t.Fatalf("close code %d (%q), want %d", ce.Code, ce.Text, wire.CloseSlowConsumer)
	}
	got := seqs(frames)
	for i, s := range got {
		if s != first+uint64(i) {
			t.Fatalf("notifications before the close are not contiguous from %d: %v", first, got)
		}
	}
	resume := live.Seq // the client has everything up to the last seq it was told about
	if len(got) > 0 {
		resume = got[len(got)-1]
	}
	t.Logf("client read %d notifications before the close", len(got))
	if want := fmt.Sprintf("slow consumer; resume with since=%d", resume); ce.Text != want {
		t.Fatalf("close reason %q, want %q", ce.Text, want)
	}
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.WebSocketCount() == 0 }, "session released")
}

func TestWebSocket_RefusesBeforeUpgrading(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{Token: "s3cret", AllowedOrigins: []string{"https://dash.example"}}})
	ok := query("channels", "*")
	tests := []struct {
		name   string
		query  string
		header http.Header
		want   int // 0: upgraded
	}{
		{"no token", ok, nil, http.StatusUnauthorized},
		{"wrong token", query("channels", "*", "token", "nope"), nil, http.StatusUnauthorized},
		{"wrong bearer", ok, http.Header{"Authorization": {"Bearer nope"}}, http.StatusUnauthorized},
		{"query token", query("channels", "*", "token", "s3cret"), nil, 0},
		{"bearer token", ok, http.Header{"Authorization": {"Bearer s3cret"}}, 0},
		{"allowed origin", query("channels", "*", "token", "s3cret"), http.Header{"Origin": {"https://dash.example"}}, 0},
		{"other origin", query("channels", "*", "token", "s3cret"), http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"other origin, no token", ok, http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"no channels", query("token", "s3cret"), nil, http.StatusBadRequest},
		{"bad since", query("channels", "*", "token", "s3cret", "since", "x"), nil, http.StatusBadRequest},
		{"since and since_time", query("channels", "*", "token", "s3cret", "since", "1", "since_time", "2024-01-01T00:00:00Z"), nil, http.StatusBadRequest},
		{"bad since_time", query("channels", "*", "token", "s3cret", "since_time", "yesterday"), nil, http.StatusBadRequest},
		{"wildcard in a list", query("channels", "a,*", "token", "s3cret"), nil, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, resp, err := e.dial(tt.query, tt.header, 0)
			if tt.want == 0 {
				if err != nil {
					t.Fatalf("refused: %v (status %d)", err, statusOf(resp))
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("upgraded")
			}
			if statusOf(resp) != tt.want {
				t.Fatalf("status %d, want %d", statusOf(resp), tt.want)
			}
		})
	}
}

func TestWebSocket_OriginDefaultIsSameOriginAndStarAllowsAny(t *testing.T) {
	same := newWSEnv(t, wsEnvOpts{})
	host := same.srv.Listener.Addr().String()
	for origin, want := range map[string]int{"http://" + host: 0, "https://elsewhere.example": http.StatusForbidden} {
		c, resp, err := same.dial(query("channels", "*"), http.Header{"Origin": {origin}}, 0)
		if (err == nil) != (want == 0) || (want != 0 && statusOf(resp) != want) {
			t.Errorf("default policy, Origin %s: err %v status %d, want %d", origin, err, statusOf(resp), want)
		}
		if c != nil {
			c.Close()
		}
	}
	any := newWSEnv(t, wsEnvOpts{ws: live.Config{AllowedOrigins: []string{"*"}}})
	c, resp, err := any.dial(query("channels", "*"), http.Header{"Origin": {"https://elsewhere.example"}}, 0)
	if err != nil {
		t.Fatalf("AllowedOrigins *: %v (status %d)", err, statusOf(resp))
	}
	c.Close()
}

// The end of Run closes every session with CloseGoingAway and its resume
// cursor, waits for them, and refuses new ones.
func TestWebSocket_ShutdownClosesWithResumeCursor(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	c := e.mustDial(query("channels", "a"))
	if m := read(t, c); m.Type != "live" {
		t.Fatalf("first frame %+v", m)
	}
	e.append(hubtest.Record("a", 1))
	last := e.append(hubtest.Record("a", 2))
	readUntil(t, c, last)
	done := make(chan error, 1)
	go func() { done <- e.stop() }() // Run's context ends
	ce, _ := closeError(t, c)
	if want := fmt.Sprintf("hub shutting down; resume with since=%d", last); ce.Code != websocket.CloseGoingAway || ce.Text != want {
		t.Fatalf("close %d %q, want %d %q", ce.Code, ce.Text, websocket.CloseGoingAway, want)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := e.ws.WebSocketCount(); n != 0 {
		t.Fatalf("WebSocketCount after Run returned = %d", n)
	}
	if _, resp, err := e.dial(query("channels", "a"), nil, 0); err == nil || statusOf(resp) != http.StatusServiceUnavailable {
		t.Fatalf("dial after Run returned: %v, status %d; want 503", err, statusOf(resp))
	}
}

// A client silent for two ping intervals is dropped; one that answers stays.
// The interval is long beside the stalls of a busy machine, which would
// otherwise drop the answering client too.
func TestWebSocket_ClientThatNeverAnswersPingsIsDropped(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{PingInterval: time.Second}})
	alive := e.mustDial(query("channels", "*"))
	mute := e.mustDial(query("channels", "*"))
	mute.SetPingHandler(func(string) error { return nil }) // no pong
	read(t, alive)
	read(t, mute)
	// The alive client reads all the time, so it answers pings.
	aliveFrames := make(chan wsMsg, 16)
	go func() {
		for {
			m, err := readErr(alive)
			if err != nil {
				close(aliveFrames)
				return
			}
			aliveFrames <- m
		}
	}()
	// The mute client reads (so it sees pings) but never answers them.
	muteEnded := make(chan error, 1)
	go func() {
		for {
			if _, err := readErr(mute); err != nil {
				muteEnded <- err
				return
			}
		}
	}()
	select {
	case <-muteEnded:
	case <-time.After(wsTimeout):
		t.Fatal("client without pongs still connected")
	}
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.WebSocketCount() == 1 }, "one session left")
	// The answering client stayed through many ping intervals.
	seq := e.append(hubtest.Record("a", 1))
	select {
	case m, ok := <-aliveFrames:
		if !ok || m.Seq != seq {
			t.Fatalf("alive client got %+v (open %v), want %d", m, ok, seq)
		}
	case <-time.After(wsTimeout):
		t.Fatal("alive client got nothing")
	}
}
