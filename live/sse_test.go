package live_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

func TestEvents_StreamHeadersRetryAndIDsAreTheLogSequence(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	s1 := e.append(hubtest.Record("a", 1))
	s2 := e.append(hubtest.Record("a", 2))
	c := e.mustOpenEvents(query("channels", "a", "since", "0"), nil)
	h := c.resp.Header
	for k, want := range map[string]string{"Content-Type": wire.ContentTypeEventStream, "Cache-Control": "private, no-cache", "X-Accel-Buffering": "no"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if h.Get("Connection") != "" || h.Get("Transfer-Encoding") != "" && c.resp.ProtoMajor > 1 {
		t.Errorf("hop-by-hop headers set by the handler: %v", h)
	}
	first := c.next()
	if first.Retry != wire.EventsRetry {
		t.Errorf("retry hint %v, want %v", first.Retry, wire.EventsRetry)
	}
	evs := append([]sseEvent{first}, c.until(s2)...)
	if got := eventSeqs(evs); !slices.Equal(got, []uint64{s1, s2}) {
		t.Fatalf("notifications %v, want %v", got, []uint64{s1, s2})
	}
	for _, ev := range evs {
		if ev.ID != e.id(ev.msg.Seq) || ev.msg.Type != ev.Type {
			t.Errorf("event %s id %q carries %s seq %d: want the type and the sequence as id", ev.Type, ev.ID, ev.msg.Type, ev.msg.Seq)
		}
		if len(ev.msg.Entries) != 1 || ev.msg.From == "" || ev.msg.Until == "" {
			t.Errorf("event data %+v: want the WebSocket notification frame", ev.msg)
		}
	}
	live := c.next()
	if live.Type != wire.EventLive || live.msg.Seq != s2 || live.ID != e.id(s2) {
		t.Fatalf("after replay %+v, want live at %d", live, s2)
	}
	s3 := e.append(hubtest.Record("a", 3))
	if ev := c.next(); ev.Type != wire.EventNotification || ev.msg.Seq != s3 || ev.ID != e.id(s3) {
		t.Fatalf("live event %+v, want notification %d", ev, s3)
	}
	if n := e.ws.EventsCount(); n != 1 {
		t.Errorf("EventsCount %d, want 1", n)
	}
}

func TestEvents_SeamUnderConcurrentAppendsHasNoLossNoDuplicate(t *testing.T) {
	const total = 500
	e := newWSEnv(t, wsEnvOpts{})
	cursor, wait := e.appendConcurrently(t, total)
	clients := map[string]*sseClient{}
	for _, chans := range []string{"*", "a", "a,c"} {
		clients[chans] = e.mustOpenEvents(query("channels", chans, "since", fmt.Sprint(cursor)), nil)
		clients[chans].start()
	}
	appended := wait()
	if t.Failed() {
		return
	}
	for chans, c := range clients {
		want := seqsAfter(appended, cursor, chans)
		evs := c.until(want[len(want)-1])
		if got := eventSeqs(evs); !slices.Equal(got, want) {
			t.Errorf("channels=%s: got %d notifications, want %d after %d, exactly once in order", chans, len(got), len(want), cursor)
		}
		lives := 0
		for _, ev := range evs {
			switch ev.Type {
			case wire.EventLive:
				lives++
			case wire.EventGap:
				t.Errorf("channels=%s: unexpected gap %+v", chans, ev.msg)
			}
		}
		if lives > 1 {
			t.Errorf("channels=%s: %d live events", chans, lives)
		}
	}
}

func TestEvents_GapEventForCursorOlderThanRetention(t *testing.T) {
	e, first, last := pastRetention(t)
	c := e.mustOpenEvents(query("channels", "a", "since", "0"), nil)
	g := c.next()
	if g.Type != wire.EventGap || g.msg.From2 != 1 || g.msg.To < first-1 || g.ID != e.id(g.msg.To) {
		t.Fatalf("first event %+v, want gap from 1 to at least %d with that id", g, first-1)
	}
	got := eventSeqs(c.until(last))
	if len(got) == 0 || got[0] != g.msg.To+1 {
		t.Fatalf("after the gap %v, want %d first", got, g.msg.To+1)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("replay after the gap skips: %v", got)
		}
	}
}

func TestEvents_LastEventIDTakesPrecedenceOverSinceAndSinceTime(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	var seq []uint64
	for i := range 5 {
		seq = append(seq, e.append(hubtest.Record("a", i+1)))
	}
	for _, q := range []string{
		query("channels", "a", "since", "0"),
		query("channels", "a", "since_time", "2000-01-01T00:00:00Z"),
		query("channels", "a"),
	} {
		c := e.mustOpenEvents(q, http.Header{wire.HeaderLastEventID: {strconv.FormatUint(seq[2], 10)}})
		if got := eventSeqs(c.until(seq[4])); !slices.Equal(got, seq[3:]) {
			t.Errorf("%s with Last-Event-ID %d: %v, want %v", q, seq[2], got, seq[3:])
		}
	}
	if _, err := e.openEvents("", query("channels", "a"), http.Header{wire.HeaderLastEventID: {"x"}}, 0); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("Last-Event-ID x: %v, want 400", err)
	}
}

func TestEvents_RefusesOriginTokenQueryAndMethodBeforeStreaming(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{Token: "s3cret"}})
	ok := query("channels", "*", "token", "s3cret")
	for _, tc := range []struct {
		name, query, origin string
		want                int
	}{
		{"foreign origin", ok, "http://evil.example", http.StatusForbidden},
		{"no token", query("channels", "*"), "", http.StatusUnauthorized},
		{"wrong token", query("channels", "*", "token", "nope"), "", http.StatusUnauthorized},
		{"no channels", query("token", "s3cret"), "", http.StatusBadRequest},
		{"unknown change", ok + "&change=renamed", "", http.StatusBadRequest},
	} {
		hdr := http.Header{}
		if tc.origin != "" {
			hdr.Set("Origin", tc.origin)
		}
		_, err := e.openEvents("", tc.query, hdr, 0)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("status %d", tc.want)) {
			t.Errorf("%s: %v, want status %d", tc.name, err, tc.want)
		}
	}
	resp, err := e.srv.Client().Post(e.srv.URL+wire.PathEvents+"?"+ok, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	c := e.mustOpenEvents(ok, http.Header{"Origin": {e.srv.URL}, "Authorization": {"Bearer s3cret"}})
	if got := c.resp.Header.Get("Access-Control-Allow-Origin"); got != e.srv.URL {
		t.Errorf("same-origin session: Access-Control-Allow-Origin %q, want %q", got, e.srv.URL)
	}
}

func TestEvents_SlowClientGetsEndEventWithResumeCursor(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{
		ws:         live.Config{SendQueue: 4, WriteTimeout: wsTimeout},
		sndBufSize: 4096,
	})
	c, err := e.openEvents("", query("channels", "*", "raw", "1"), nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; e.ws.SlowClosed() == 0; i++ {
		if i == 2000 {
			t.Fatal("2000 records and the session is not closed as slow")
		}
		rec := hubtest.Record("a", i+1)
		rec.Body = append(rec.Body, bytes.Repeat([]byte(" "), 4000)...)
		e.append(rec)
	}
	evs := c.rest()
	if len(evs) < 2 || evs[0].Type != wire.EventLive {
		t.Fatalf("%d events, want live first and end last", len(evs))
	}
	end := evs[len(evs)-1]
	resume := evs[len(evs)-2].msg.Seq
	if end.Type != wire.EventEnd || end.end.Code != wire.CloseSlowConsumer || end.end.Since != resume ||
		end.end.Reason != fmt.Sprintf("slow consumer; resume with since=%d", resume) {
		t.Fatalf("last event %+v, want end %d since=%d", end, wire.CloseSlowConsumer, resume)
	}
	got := eventSeqs(evs)
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("notifications before the end are not contiguous: %v", got)
		}
	}
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.EventsCount() == 0 }, "session released")
}

func TestEvents_ShutdownEndsWithGoingAwayAndCursor(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	s1 := e.append(hubtest.Record("a", 1))
	c := e.mustOpenEvents(query("channels", "a", "since", "0"), nil)
	c.until(s1)
	e.ws.CloseSessions()
	evs := c.rest()
	if len(evs) == 0 {
		t.Fatal("stream ended without an end event")
	}
	end := evs[len(evs)-1]
	if end.Type != wire.EventEnd || end.end.Code != wire.CloseGoingAway || end.end.Since != s1 {
		t.Fatalf("last event %+v, want end %d since=%d", end, wire.CloseGoingAway, s1)
	}
}

func TestEvents_FlowLiveThroughAReverseProxyAndOverHTTP2(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{http2: true})
	target, _ := url.Parse(e.srv.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = e.srv.Client().Transport // HTTP/2 to the hub
	proxy := httptest.NewServer(rp)         // HTTP/1.1 to the client
	t.Cleanup(proxy.Close)
	for name, base := range map[string]string{"http2": "", "proxy": proxy.URL} {
		c, err := e.openEvents(base, query("channels", "a"), nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "http2" && c.resp.ProtoMajor != 2 {
			t.Errorf("direct session over %s, want HTTP/2", c.resp.Proto)
		}
		if ev := c.next(); ev.Type != wire.EventLive {
			t.Fatalf("%s: first event %+v, want live", name, ev)
		}
		s := e.append(hubtest.Record("a", 1))
		if ev := c.next(); ev.Type != wire.EventNotification || ev.msg.Seq != s {
			t.Fatalf("%s: live event %+v, want notification %d", name, ev, s)
		}
		c.close()
	}
}
