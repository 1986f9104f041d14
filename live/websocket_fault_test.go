package live_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// resumer is a client that follows the protocol as the dashboard and
// client/mirror do: when the hub closes its session with a resume cursor
// (a slow consumer after a burst, for one), it connects again with
// since=<cursor>. It collects every frame of every session.
type resumer struct {
	mu       sync.Mutex
	frames   []wsMsg
	sessions int
	closes   []string // close frames received, "code reason"
}

func resume(t *testing.T, e *wsEnv, channels string, since string) *resumer {
	r := &resumer{}
	first := e.mustDial(query("channels", channels, "since", since))
	go func() {
		c := first
		for {
			r.mu.Lock()
			r.sessions++
			r.mu.Unlock()
			var ce *websocket.CloseError
			for {
				m, err := readErr(c)
				if err != nil {
					if !errors.As(err, &ce) {
						return // the test ended
					}
					break
				}
				r.mu.Lock()
				r.frames = append(r.frames, m)
				r.mu.Unlock()
			}
			_ = c.Close()
			r.mu.Lock()
			r.closes = append(r.closes, fmt.Sprint(ce.Code, " ", ce.Text))
			r.mu.Unlock()
			_, cursor, ok := strings.Cut(ce.Text, "resume with since=")
			if !ok {
				t.Errorf("session closed without a resume cursor: %d %q", ce.Code, ce.Text)
				return
			}
			var err error
			if c, _, err = e.dial(query("channels", channels, "since", cursor), nil, 0); err != nil {
				t.Errorf("resume with since=%s: %v", cursor, err)
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	return r
}

func (r *resumer) all() []wsMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.frames)
}

// has reports whether a notification with seq has arrived.
func (r *resumer) has(seq uint64) bool {
	return slices.Contains(seqs(r.all()), seq)
}

func (r *resumer) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%d sessions, closed with %q", r.sessions, r.closes)
}

// TestWebSocket_LogOutageUnderLoadLosesNothing cuts the transport and the
// log cache off from the log while records keep being appended (through
// the real log, as another hub would): a live session and a session that
// connects during the outage to replay from the start both stay open,
// answering pings, and once the log is back each client receives every
// record it asked for exactly once and in order. (The backlog of the outage
// arrives as a burst: a session whose send queue it overflows is closed as
// a slow consumer with its resume cursor, and the client resumes.) The
// ping interval is long beside the stalls of a busy machine: a client
// silent for two of them is dropped, and the outage outlasts that.
func TestWebSocket_LogOutageUnderLoadLosesNothing(t *testing.T) {
	o := &outage{}
	const ping = time.Second
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{PingInterval: ping}, under: o.Log, over: o.Log})
	live := resume(t, e, "*", "")
	testenv_Eventually(t, func() bool { return len(live.all()) > 0 }) // the live frame

	var mu sync.Mutex
	var appended []wire.Record
	var after atomic.Int64 // appends since the outage ended; -1 before
	after.Store(-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; after.Load() < 40; i++ {
			rec := hubtest.Record([]string{"a", "b"}[i%2], i)
			seq, _, err := e.log.Append(e.ctx, rec)
			if err != nil {
				t.Errorf("append: %v", err)
				return
			}
			rec.Seq = seq
			mu.Lock()
			appended = append(appended, rec)
			mu.Unlock()
			if after.Load() >= 0 {
				after.Add(1)
			}
			time.Sleep(5 * time.Millisecond) // pacing the load, not synchronisation
		}
	}()
	testenv_Eventually(t, func() bool { return len(seqs(live.all())) >= 20 })

	o.Set(true)
	replayer := resume(t, e, "a", "0")
	testenv.Eventually(t, wsTimeout, func() bool {
		ok, since, _ := e.ws.Health()
		cok, _, _ := e.cache.Health()
		return !ok && !cok && time.Since(since) > 5*ping/2
	}, "transport and cache stalled for longer than a silent client is kept")
	if n := e.ws.WebSocketCount(); n != 2 {
		t.Fatalf("%d sessions open during the outage, want 2", n)
	}
	o.Set(false)
	after.Store(0)
	<-done
	if t.Failed() {
		return
	}

	var wantAll, wantA []uint64
	for _, r := range appended {
		wantAll = append(wantAll, r.Seq)
		if r.Channel == "a" {
			wantA = append(wantA, r.Seq)
		}
	}
	deadline := time.Now().Add(wsTimeout)
	for !live.has(wantAll[len(wantAll)-1]) || !replayer.has(wantA[len(wantA)-1]) {
		if time.Now().After(deadline) {
			l, r := seqs(live.all()), seqs(replayer.all())
			t.Fatalf("after %s: live client has %d of %d notifications (%s), replaying client %d of %d (%s)",
				wsTimeout, len(l), len(wantAll), live, len(r), len(wantA), replayer)
		}
		time.Sleep(10 * time.Millisecond) // polling with a deadline, not synchronisation
	}
	if got := seqs(live.all()); !slices.Equal(got, wantAll) {
		t.Errorf("live client: %d notifications, want the %d appended exactly once in order (%s)", len(got), len(wantAll), live)
	}
	if got := seqs(replayer.all()); !slices.Equal(got, wantA) {
		t.Errorf("replaying client: %d notifications, want the %d of channel a exactly once in order (%s)", len(got), len(wantA), replayer)
	}
	for _, m := range append(live.all(), replayer.all()...) {
		if m.Type == "gap" {
			t.Errorf("gap frame %+v: nothing was removed from the log", m)
		}
	}
	testenv_Eventually(t, func() bool {
		ok, _, _ := e.ws.Health()
		cok, _, _ := e.cache.Health()
		return ok && cok
	})
	t.Logf("outage refused %d calls; live client: %s; replaying client: %s", o.Refused(), live, replayer)
}

// TestWebSocket_ClientSendingDataIsClosedOthersUnaffected: clients send
// only control frames (package wire); each kind of data message closes its
// session with the matching code and a reason naming the resume cursor,
// is counted, and a bystander session keeps receiving.
func TestWebSocket_ClientSendingDataIsClosedOthersUnaffected(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	bystander := e.mustDial(query("channels", "*"))
	if m := read(t, bystander); m.Type != "live" {
		t.Fatalf("first frame %+v, want live", m)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	tests := []struct {
		name    string
		kind    int
		payload []byte
		code    int
	}{
		{"binary", websocket.BinaryMessage, []byte{0, 1, 2}, websocket.CloseUnsupportedData},
		{"big binary", websocket.BinaryMessage, big, websocket.CloseUnsupportedData},
		{"text, not JSON", websocket.TextMessage, []byte("hello hub"), websocket.CloseUnsupportedData},
		{"text, not UTF-8", websocket.TextMessage, []byte("\xff\xfe\xfd"), websocket.CloseUnsupportedData},
		{"JSON of an unknown type", websocket.TextMessage, []byte(`{"type":"subscribe","channels":["b"]}`), websocket.ClosePolicyViolation},
		{"JSON, not an object", websocket.TextMessage, []byte(`[1,2,3]`), websocket.ClosePolicyViolation},
		{"empty text", websocket.TextMessage, nil, websocket.CloseUnsupportedData},
		{"text over the limit", websocket.TextMessage, big, websocket.CloseMessageTooBig},
		{"JSON over the limit", websocket.TextMessage, []byte(`{"type":"x","pad":"` + strings.Repeat("y", 600) + `"}`), websocket.CloseMessageTooBig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := e.mustDial(query("channels", "a"))
			first := read(t, c)
			if first.Type != "live" {
				t.Fatalf("first frame %+v, want live", first)
			}
			if err := c.WriteMessage(tt.kind, tt.payload); err != nil {
				t.Fatal(err)
			}
			ce, _ := closeError(t, c)
			if ce.Code != tt.code {
				t.Errorf("close code %d (%q), want %d", ce.Code, ce.Text, tt.code)
			}
			if want := fmt.Sprintf("resume with since=%d", first.Seq); !strings.HasSuffix(ce.Text, want) || len(ce.Text) > 123 {
				t.Errorf("close reason %q, want one that ends with %q", ce.Text, want)
			}
		})
	}
	if got := e.ws.ProtocolClosed(); got != uint64(len(tests)) {
		t.Errorf("ProtocolClosed = %d, want %d", got, len(tests))
	}
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.WebSocketCount() == 1 }, "only the bystander left")
	// Control frames are allowed: a ping is answered and the session stays.
	pong := make(chan struct{}, 1)
	bystander.SetPongHandler(func(string) error { pong <- struct{}{}; return nil })
	if err := bystander.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(wsTimeout)); err != nil {
		t.Fatal(err)
	}
	// the pong is read with the frames after it: append until one is
	// read after the pong (the hub writes them from different goroutines)
	deadline := time.Now().Add(wsTimeout)
	for i := 1; ; i++ {
		seq := e.append(hubtest.Record("a", i))
		if m := read(t, bystander); m.Type != "notification" || m.Seq != seq {
			t.Fatalf("bystander got %+v, want notification %d", m, seq)
		}
		select {
		case <-pong:
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the hub did not answer the client's ping")
		}
	}
}

// TestWebSocket_QueryBoundsAnswer400WithAReason: hostile queries are
// refused before the upgrade with a short plain-text reason.
func TestWebSocket_QueryBoundsAnswer400WithAReason(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	many := make([]string, wire.MaxSessionChannels+1)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	long := strings.Repeat("n", 10000)
	tests := []struct {
		name, query, reason string
	}{
		{"no channels", "since=1", "channels is required"},
		{"too many channels", "channels=" + strings.Join(many, ","), "at most 64"},
		{"channel name too long", "channels=" + long[:65], "is not a channel name"},
		{"huge channel name", "channels=" + long, "…(10002 bytes)"},
		{"bad characters", "channels=a.b", "is not a channel name"},
		{"empty name in the list", "channels=a,,b", "is not a channel name"},
		{"channels twice", "channels=a&channels=b", "given 2 times"},
		{"since not a number", "channels=a&since=-1", "not a sequence number"},
		{"since overflows", "channels=a&since=18446744073709551616", "not a sequence number"},
		{"huge since", "channels=a&since=" + long, "not a sequence number: 10000 bytes"},
		{"since_time not RFC 3339", "channels=a&since_time=yesterday", "not an RFC 3339 date-time"},
		{"both cursors", "channels=a&since=1&since_time=2024-01-01T00:00:00Z", "not both"},
		{"raw not a flag", "channels=a&raw=yes", "raw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(e.srv.URL + "/ws?" + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body := new(bytes.Buffer)
			_, _ = body.ReadFrom(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body.String(), tt.reason) || body.Len() > 1024 {
				t.Errorf("status %d, body %q (%d bytes); want 400 saying %q in at most 1 KiB", resp.StatusCode, clipped(body.String()), body.Len(), tt.reason)
			}
		})
	}
}

func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
