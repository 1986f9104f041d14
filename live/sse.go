package live

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Events returns the handler of Server-Sent Events sessions
// (wire.PathEvents): the sessions of the WebSocket endpoint, with the same
// query, origin and token rules, replay, live fan-out, gap frames and send
// queue, written as a text/event-stream. Each frame is an event whose type
// is the frame's and whose id is the cursor a client has once it holds the
// event, so a browser's EventSource resumes after a drop by itself: the
// Last-Event-ID header it sends takes precedence over since and
// since_time. A session the hub ends (slow consumer, shutdown, replay
// failure) gets an end event (wire.End) first. Package wire describes the
// protocol.
func (ls *Sessions) Events() http.Handler { return http.HandlerFunc(ls.serveEvents) }

// serveEvents answers a CORS preflight, refuses what the WebSocket
// endpoint refuses, as plain HTTP, then runs the session in the request's
// goroutine.
func (ls *Sessions) serveEvents(w http.ResponseWriter, r *http.Request) {
	if !ls.streamMethod(w, r, "open a session with GET") {
		return
	}
	req, ok := ls.admit(w, r, true)
	if !ok {
		return
	}
	ls.pinLiveStart(r.Context(), &req)
	h := w.Header()
	h.Set("Content-Type", wire.ContentTypeEventStream)
	// one session's, maybe a private channel's: never a shared cache's
	h.Set("Cache-Control", "private, no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx and the like: pass each event on at once
	w.WriteHeader(http.StatusOK)
	c := &sseConn{w: w, rc: http.NewResponseController(w), timeout: ls.cfg.WriteTimeout}
	if c.write([]byte("retry: "+strconv.FormatInt(wire.EventsRetry.Milliseconds(), 10)+"\n\n")) != nil {
		return
	}
	s := newSession(ls, r.Context(), &ls.sseCount, req)
	s.out = c
	if !ls.add(s) {
		reason := "hub shutting down" // as the WebSocket close: a session that asked for no cursor has none to resume from
		if req.hasSince {
			reason += "; resume with since=" + strconv.FormatUint(req.since, 10)
		}
		c.end(wire.CloseGoingAway, reason, req.since)
		return
	}
	s.run()
}

// preflight answers a CORS preflight request from an allowed origin, for
// clients that send Authorization or Last-Event-ID across origins.
func (ls *Sessions) preflight(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Origin") == "" || !ls.originAllowed(r) {
		ls.cfg.Refusals.Refuse(w, hub.ReasonOrigin, "origin not allowed")
		return
	}
	ls.allowOrigin(w, r)
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET")
	h.Set("Access-Control-Allow-Headers", "Authorization, Last-Event-ID, Cache-Control")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// allowOrigin lets a browser page from the request's Origin, already
// allowed, read the response (CORS). Without Origin it does nothing.
func (ls *Sessions) allowOrigin(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	w.Header().Add("Vary", "Origin")
	if ls.originNamed(r) { // an EventSource withCredentials sends the mercureAuthorization cookie; never for "*"
		w.Header().Set("Access-Control-Allow-Credentials", "true")
	}
}

// sseConn writes a session to a Server-Sent Events response: a frame is an
// event (flushed at once), a keep-alive a comment, the end an end event.
type sseConn struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration // per write
	buf     []byte
}

// write writes b and flushes it, within the write timeout.
func (c *sseConn) write(b []byte) error {
	_ = c.rc.SetWriteDeadline(time.Now().Add(c.timeout))
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("events: write: %w", err)
	}
	if err := c.rc.Flush(); err != nil {
		return fmt.Errorf("events: flush: %w", err)
	}
	return nil
}

func (c *sseConn) frame(kind string, id wire.Cursor, b []byte) error {
	c.buf = appendEvent(c.buf[:0], kind, id, b)
	return c.write(c.buf)
}

func (c *sseConn) encoded(e *encodedFrame) error { return c.write(e.event()) }

func (c *sseConn) keepAlive() error { return c.write([]byte(wire.EventsKeepAlive + "\n\n")) }

// end writes the end event when code is not 0; the response ends when the
// handler returns.
func (c *sseConn) end(code int, reason string, pos uint64) {
	if code != 0 {
		b := append([]byte("event: "+wire.EventEnd+"\ndata: "), wire.EndFrame(code, reason, pos)...)
		_ = c.write(append(b, "\n\n"...))
	}
}

// appendEvent appends the Server-Sent Event of a frame to buf: its type,
// id (the cursor's text) and JSON (which holds no line break) as the one
// data line.
func appendEvent(buf []byte, kind string, id wire.Cursor, json []byte) []byte {
	buf = append(buf, "event: "...)
	buf = append(buf, kind...)
	buf = append(buf, "\nid: "...)
	buf = id.Append(buf)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, json...)
	return append(buf, "\n\n"...)
}

// streamMethod lets a GET through to an event stream (/events, Mercure),
// answers an OPTIONS preflight, and refuses any other method (405, how
// saying what to do); it reports whether the request goes on.
func (ls *Sessions) streamMethod(w http.ResponseWriter, r *http.Request, how string) bool {
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodOptions:
		ls.preflight(w, r)
	default:
		w.Header().Set("Allow", "GET, OPTIONS")
		ls.cfg.Refusals.Refuse(w, hub.ReasonMethod, "method not allowed: %s", how)
	}
	return false
}
