package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// wsTimeout bounds every wait of the WebSocket tests.
const wsTimeout = 20 * time.Second

// wsEnv is a WebSocket transport over the real JetStream log on embedded
// NATS, through the log cache, served by an httptest server.
type wsEnv struct {
	t     testing.TB
	log   *jslog.Log
	cache *logcache.Cache
	ws    *live.Sessions
	srv   *httptest.Server
	ctx   context.Context

	stopWS context.CancelFunc // ends ws.Run
	wsDone chan error         // ws.Run's result
}

type wsEnvOpts struct {
	log        jslog.Config
	ws         live.Config
	sndBufSize int  // server socket send buffer; 0: the system's
	http2      bool // serve TLS with HTTP/2
	// under and over, when set, wrap the log below the cache (what the
	// cache follows) and above it (what the transport reads).
	under, over func(hub.Log) hub.Log
}

func newWSEnv(t testing.TB, o wsEnvOpts) *wsEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	_, nc := testenv.NATS(t)
	l, err := jslog.Open(ctx, nc, o.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var below hub.Log = l
	if o.under != nil {
		below = o.under(l)
	}
	c := logcache.New(below, logcache.Config{MaxRecords: 128})
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	ready := c.Changed()
	go func() { _ = c.Run(runCtx); close(ran) }()
	t.Cleanup(func() { stopRun(); <-ran })
	select {
	case <-ready:
	case <-time.After(wsTimeout):
		t.Fatal("cache not ready")
	}
	o.ws.Log = c
	if o.over != nil {
		o.ws.Log = o.over(c)
	}
	ws := live.New(o.ws)
	mux := http.NewServeMux()
	mux.Handle("/ws", ws)
	mux.Handle("/events", ws.Events())
	srv := httptest.NewUnstartedServer(hubtest.LoadContract(t).Validating(t, mux)) // every answer checked against the contract
	if o.sndBufSize > 0 {
		srv.Listener = smallBufListener{srv.Listener, o.sndBufSize}
	}
	if o.http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	wsCtx, stopWS := context.WithCancel(context.Background())
	wsDone := make(chan error, 1)
	go func() { wsDone <- ws.Run(wsCtx) }()
	e := &wsEnv{t: t, log: l, cache: c, ws: ws, srv: srv, ctx: ctx, stopWS: stopWS, wsDone: wsDone}
	t.Cleanup(func() {
		if err := e.stop(); err != nil {
			t.Error(err)
		}
		srv.Close()
	})
	return e
}

// stop ends the sessions' Run and waits for it to return, every session
// ended; it is an error when Run takes longer than wsTimeout. It may be
// called again.
func (e *wsEnv) stop() error {
	e.stopWS()
	select {
	case err, ok := <-e.wsDone:
		if ok {
			close(e.wsDone)
		}
		return err
	case <-time.After(wsTimeout):
		return errors.New("Run did not return")
	}
}

// smallBufListener shrinks the send buffer of accepted connections so that
// a client that does not read blocks the server quickly.
type smallBufListener struct {
	net.Listener
	size int
}

func (l smallBufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(l.size)
	}
	return c, err
}

// id is the cursor text (an SSE event id) of seq on the env's log.
func (e *wsEnv) id(seq uint64) string {
	return wire.Cursor{Epoch: e.log.Epoch(), Seq: seq}.String()
}

func (e *wsEnv) url(query string) string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/ws?" + query
}

// dial connects a client; rcvBuf > 0 shrinks its socket receive buffer.
func (e *wsEnv) dial(query string, hdr http.Header, rcvBuf int) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{HandshakeTimeout: wsTimeout}
	if rcvBuf > 0 {
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(rcvBuf)
			}
			return c, err
		}
		d.ReadBufferSize = 1024
	}
	return d.DialContext(e.ctx, e.url(query), hdr)
}

func (e *wsEnv) mustDial(query string) *websocket.Conn {
	e.t.Helper()
	c, resp, err := e.dial(query, nil, 0)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		e.t.Fatalf("dial %s: %v (status %d)", query, err, status)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// append stores a notification on channel and returns its sequence.
func (e *wsEnv) append(rec wire.Record) uint64 {
	e.t.Helper()
	seq, dup, err := e.log.Append(e.ctx, rec)
	if err != nil || dup {
		e.t.Fatalf("append: %d %v %v", seq, dup, err)
	}
	return seq
}

// wsBase is the until of hubtest.Record 0.
var wsBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// wsMsg is any frame the hub sends.
type wsMsg struct {
	Type        string `json:"type"`
	Channel     string `json:"channel"`
	Topic       string `json:"topic"`
	Seq         uint64 `json:"seq"`
	From        string `json:"from"`
	Until       string `json:"until"`
	ContentType string `json:"content_type"`
	Received    string `json:"received"`
	Entries     []struct {
		Loc      string `json:"loc"`
		Change   string `json:"change"`
		DateTime string `json:"datetime"`
		LastMod  string `json:"lastmod"`
		Length   *int64 `json:"length"`
		Type     string `json:"type"`
	} `json:"entries"`
	XML   *string `json:"xml"`
	Body  *string `json:"body"`
	Error string  `json:"error"`
	// the record's W3C trace context
	TraceParent string `json:"traceparent"`
	TraceState  string `json:"tracestate"`
	From2       uint64 `json:"missing_from_seq"`
	To          uint64 `json:"missing_to_seq"`
	Message     string `json:"message"`
}

// read returns the next frame, failing the test after wsTimeout.
func read(t *testing.T, c *websocket.Conn) wsMsg {
	t.Helper()
	m, err := readErr(c)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

func readErr(c *websocket.Conn) (wsMsg, error) {
	_ = c.SetReadDeadline(time.Now().Add(wsTimeout))
	var m wsMsg
	_, b, err := c.ReadMessage()
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("frame %s: %w", b, err)
	}
	return m, nil
}

// readUntil reads frames until one notification has seq >= last and
// returns all of them.
func readUntil(t *testing.T, c *websocket.Conn, last uint64) []wsMsg {
	t.Helper()
	var out []wsMsg
	for {
		m := read(t, c)
		out = append(out, m)
		if m.Type == "notification" && m.Seq >= last {
			return out
		}
	}
}

// seqs returns the sequences of the notifications among ms.
func seqs(ms []wsMsg) []uint64 {
	var out []uint64
	for _, m := range ms {
		if m.Type == "notification" {
			out = append(out, m.Seq)
		}
	}
	return out
}

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// closeError reads until the connection ends and returns its close error.
func closeError(t *testing.T, c *websocket.Conn) (*websocket.CloseError, []wsMsg) {
	t.Helper()
	var got []wsMsg
	for {
		m, err := readErr(c)
		if err == nil {
			got = append(got, m)
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("connection ended with %v, want a close frame", err)
		}
		return ce, got
	}
}

func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

func testenv_Eventually(t *testing.T, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, wsTimeout, cond)
}

// pastRetention is an env whose log keeps 16 KiB, with 40 records of about
// 1 KB appended to channel a: the first have been dropped. It returns the
// log's first remaining sequence and the last.
func pastRetention(t *testing.T) (e *wsEnv, first, last uint64) {
	e = newWSEnv(t, wsEnvOpts{log: jslog.Config{MaxBytes: 16 << 10}})
	for i := range 40 {
		rec := hubtest.Record("a", i+1)
		rec.Body = append(rec.Body, bytes.Repeat([]byte(" "), 1000)...)
		last = e.append(rec)
	}
	testenv_Eventually(t, func() bool {
		f, _, err := e.log.Bounds(e.ctx)
		first = f
		return err == nil && f > 1
	})
	return e, first, last
}

// appendConcurrently appends total change notifications, to channels a, b
// and c in turn, from a goroutine. It returns once 101 are in, with the
// sequence of the 51st as a cursor, and wait, which waits for the rest and
// returns every record appended.
func (e *wsEnv) appendConcurrently(t *testing.T, total int) (cursor uint64, wait func() []wire.Record) {
	var mu sync.Mutex
	var appended []wire.Record
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range total {
			rec := hubtest.Record([]string{"a", "b", "c"}[i%3], i+1)
			seq, _, err := e.log.Append(e.ctx, rec)
			if err != nil {
				t.Errorf("append %d: %v", i, err)
				return
			}
			rec.Seq = seq
			mu.Lock()
			appended = append(appended, rec)
			mu.Unlock()
			if i == 100 {
				close(started)
			}
		}
	}()
	<-started
	mu.Lock()
	cursor = appended[50].Seq
	mu.Unlock()
	return cursor, func() []wire.Record { <-done; return appended }
}

// seqsAfter are the sequences, in order, of the records after cursor on
// chans ("*" or a comma-separated list of channels).
func seqsAfter(recs []wire.Record, cursor uint64, chans string) []uint64 {
	var want []uint64
	for _, r := range recs {
		if r.Seq > cursor && (chans == "*" || strings.Contains(chans, r.Channel)) {
			want = append(want, r.Seq)
		}
	}
	return want
}
