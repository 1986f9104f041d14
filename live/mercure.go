package live

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// MercureSubscribe returns the handler of Mercure subscriptions (GET, and
// OPTIONS for CORS) at wire.PathMercure: a second face of the same sessions as
// Events. The subscription's topic matchers (match, match_exact,
// match_urlpattern, and the topic parameter of older drafts) select the
// records whose channel topic they match, in every channel; each record is
// an event whose id is its publisher's (wire.MercureID) or else its cursor
// (as on /events), so Last-Event-ID, or the query's last_event_id or
// lastEventID, resumes from the log ("earliest" replays all it holds), and
// whose data is the update as it was published, line by line. A token (access.TokenFrom: the
// authorization query parameter, the mercureAuthorization cookie or
// Authorization: Bearer) is verified with rules (access.VerifyAccess):
// one that does not verify is refused with 401; without one the
// subscriber is anonymous and receives public channels only. A private
// channel's records reach only sessions whose grant covers its topic. Gaps,
// resets and the end are typed events (gap, reset, end), which a Mercure
// client's onmessage does not see; the live frame and keep-alives are
// comments.
func (ls *Sessions) MercureSubscribe(rules access.AccessRules) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ls.streamMethod(w, r, "subscribe with GET") {
			return
		}
		req, ok := ls.admitMercure(w, r, rules)
		if !ok {
			return
		}
		defer ls.mercure.track(r.URL.Query())() // listed by the subscription API
		ls.pinLiveStart(r.Context(), &req)      // a publisher's id not found in the log starts here too
		c := &mercureConn{sseConn{w: w, rc: http.NewResponseController(w), timeout: ls.cfg.WriteTimeout}}
		writeStreamHeader(w)
		if c.write([]byte("retry: "+strconv.FormatInt(wire.EventsRetry.Milliseconds(), 10)+"\n\n")) != nil {
			return
		}
		if req.mercureAfter != "" {
			ls.resumeAfterID(r.Context(), &req)
		}
		s := newSession(ls, r.Context(), &ls.sseCount, req)
		s.out = c
		if !ls.add(s) {
			c.end(wire.CloseGoingAway, "hub shutting down", req.since)
			return
		}
		s.run()
	})
}

// MaxIDScan bounds how many of the log's latest records a subscription
// resuming after a publisher's id (Last-Event-ID that is no cursor) reads
// to find it.
const MaxIDScan = 100_000

// resumeAfterID turns req's publisher id into the cursor of the latest
// record among the log's last MaxIDScan that carries it. An id not found
// there (or a log that fails) is the cursor it reads as, when it reads as
// one (a cursor of this log, or of an earlier one, which resets), and
// otherwise starts the subscription live, from the log's end. Publishers
// cannot give ids that read as this log's cursors.
func (ls *Sessions) resumeAfterID(ctx context.Context, req *wsRequest) {
	log := ls.cfg.Log
	first, last, err := log.Bounds(ctx)
	if err != nil {
		return
	}
	seq := max(first, last-min(last, MaxIDScan))
	for {
		rec, err := log.Next(ctx, "", seq)
		if err != nil {
			return
		}
		if wire.MercureID(rec.Key) == req.mercureAfter {
			req.since, req.epoch, req.hasSince = rec.Seq, logEpoch(log), true
		}
		seq = rec.Seq + 1
	}
}

// writeStreamHeader sends the header of an event stream at once.
func writeStreamHeader(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", wire.ContentTypeEventStream)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// admitMercure checks the origin (403), the --ws-token when set (401),
// the query (400) and the Mercure token (401), and refuses a session once
// the engine shuts down (503); it answers a refused request itself.
func (ls *Sessions) admitMercure(w http.ResponseWriter, r *http.Request, rules access.AccessRules) (wsRequest, bool) {
	if !ls.originAllowed(r) {
		ls.cfg.Refusals.Refuse(w, hub.ReasonOrigin, "origin not allowed")
		return wsRequest{}, false
	}
	ls.allowOrigin(w, r)
	if ls.cfg.Token != "" && r.URL.Query().Get(wire.ParamToken) != ls.cfg.Token {
		ls.cfg.Refusals.Refuse(w, hub.ReasonSessionToken, "missing or wrong token: this hub's live sessions need ?token=")
		return wsRequest{}, false
	}
	req, err := parseMercureQuery(r.URL.Query(), r.Header.Get(wire.HeaderLastEventID))
	if err != nil {
		ls.cfg.Refusals.Refuse(w, hub.ReasonSession, "%s", err.Error())
		return req, false
	}
	req.topics.origin = ls.cfg.Origin
	if tok := access.TokenFrom(r, ""); tok != "" {
		g, err := ls.cfg.Readers.VerifyAccess(r.Context(), tok, rules)
		if err != nil {
			(&access.Refusal{Status: http.StatusUnauthorized, Reason: err.Error()}).Write(w)
			return req, false
		}
		req.grant, req.expires = g, g.Expires
	}
	return req, ls.admitOpen(w)
}

// mercureConn writes a session as a Mercure event stream: a record is an
// untyped event (the client's onmessage) whose data is the record's body;
// the hub's other frames are typed events or comments.
type mercureConn struct{ sseConn }

// recordWriter is a sessionOut that writes records itself rather than
// their notification frames.
type recordWriter interface {
	record(rec *wire.Record, id wire.Cursor) error
}

// record writes rec's update: its id is the one its publisher gave
// (wire.MercureID), else the cursor.
func (c *mercureConn) record(rec *wire.Record, id wire.Cursor) error {
	text := wire.MercureID(rec.Key)
	if text == "" {
		text = id.String()
	}
	c.buf = appendMercureEvent(c.buf[:0], "", text, rec.Body)
	return c.write(c.buf)
}

func (c *mercureConn) frame(kind string, id wire.Cursor, b []byte) error {
	if kind == wire.FrameLive {
		return c.write([]byte(": live " + id.String() + "\n\n"))
	}
	c.buf = appendMercureEvent(c.buf[:0], kind, id.String(), b)
	return c.write(c.buf)
}

func (c *mercureConn) encoded(e *encodedFrame) error { return c.frame(e.kind, e.id, e.json) }

// appendMercureEvent appends an event to buf: id, the type when not ""
// and data, one data line per line of data (split at CR LF, CR or LF, as
// the client joins them with LF), so that empty lines and leading spaces
// come through unchanged.
func appendMercureEvent(buf []byte, kind, id string, data []byte) []byte {
	buf = append(buf, "id: "...)
	buf = append(buf, id...)
	buf = append(buf, '\n')
	if kind != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, kind...)
		buf = append(buf, '\n')
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	for {
		i := strings.IndexAny(s, "\r\n")
		buf = append(buf, "data: "...)
		if i < 0 {
			buf = append(buf, s...)
			buf = append(buf, '\n')
			break
		}
		buf = append(buf, s[:i]...)
		buf = append(buf, '\n')
		s = s[i+1:]
	}
	return append(buf, '\n')
}
