package mirror

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// WebSocketConfig says where a hub's WebSocket endpoint is.
type WebSocketConfig struct {
	Hub     string // hub URL; the endpoint is /ws at its origin
	Channel string // the hub's channel name
	Token   string // optional, sent as Authorization: Bearer
}

// wsURL builds the WebSocket session URL; see sessionURL.
func wsURL(hub string, channels []string, seq uint64, epoch string, p time.Time, f changefeed.Filter) (string, error) {
	return sessionURL(wire.WebSocketURL, hub, channels, seq, epoch, p, f)
}

// sessionURL builds a live session's URL (WebSocket or Server-Sent Events,
// by build): replay after seq (of the log epoch) when known, else after the
// Source time P, else from the start of the log; only the entries f
// selects (the zero Filter: every entry).
func sessionURL(build func(string, wire.Session) (string, error), hub string, channels []string, seq uint64, epoch string, p time.Time, f changefeed.Filter) (string, error) {
	s := wire.Session{Channels: channels, Raw: true}
	switch {
	case seq > 0 || p.IsZero():
		s.Since, s.HasSince, s.Epoch = seq, true, epoch
	default:
		s.SinceTime = p
	}
	u, err := build(hub, s)
	if err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	if f.IsZero() {
		return u, nil
	}
	pu, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	q := pu.Query()
	addFilterQuery(q, f)
	pu.RawQuery = q.Encode()
	return pu.String(), nil
}

// RunWebSocket consumes the hub's WebSocket for the channel: it replays
// from the state's sequence (or Source time), then follows live, applying
// each notification (Config.Filter is sent as the session's prefix and
// change parameters, and applied here too, so a hub that ignores them
// does no harm); it reconnects after failures, until ctx ends. Call
// Start (or Run with a nil channel) for the baseline.
func (m *Mirror) RunWebSocket(ctx context.Context, cfg WebSocketConfig) error {
	return m.runSessions(ctx, "WebSocket", func(ctx context.Context) (bool, error) { return m.wsSession(ctx, cfg) })
}

// runSessions takes the baseline, then runs one live session after the
// other until ctx ends, pausing longer after each that delivered nothing.
func (m *Mirror) runSessions(ctx context.Context, transport string, session func(context.Context) (bool, error)) error {
	if err := m.retry(ctx, "start-up catch-up", func() error { return m.Start(ctx) }); err != nil {
		return err
	}
	for n := 1; ; n++ {
		ok, err := session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ok {
			n = 1
		}
		pause := retryPause(n)
		m.emit(Event{Kind: EventWarning, Message: fmt.Sprintf("%s session ended (%v); reconnecting in %s", transport, err, pause)})
		if !sleep(ctx, pause) {
			return ctx.Err()
		}
	}
}

// noteCursor records the hub log's epoch and, with reset (the hub's reset
// frame: the state's cursor named no position of its log), moves the
// sequence back to where the hub goes on. Notifications replayed after a
// reset that the mirror holds already are recognised by their until and
// not applied twice.
func (m *Mirror) noteCursor(c wire.Cursor, reset bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !reset && m.st.Epoch == c.Epoch {
		return nil
	}
	m.st.Epoch = c.Epoch
	if reset {
		m.st.Seq = c.Seq
	}
	return m.save()
}

// wsSession runs one connection; ok says it delivered something.
func (m *Mirror) wsSession(ctx context.Context, cfg WebSocketConfig) (bool, error) {
	st := m.State()
	channels := []string{cfg.Channel}
	if fw := m.frameworkChannel(ctx, cfg.Channel, !m.cfg.Filter.IsZero()); fw != "" {
		channels = append(channels, fw)
	}
	target, err := wsURL(cfg.Hub, channels, st.Seq, st.Epoch, st.Until, m.cfg.Filter)
	if err != nil {
		return false, err
	}
	h := http.Header{}
	if cfg.Token != "" {
		h.Set("Authorization", "Bearer "+cfg.Token)
	}
	d := websocket.Dialer{HandshakeTimeout: 15 * time.Second}
	conn, resp, err := d.DialContext(ctx, target, h)
	if err != nil {
		if resp != nil {
			return false, fmt.Errorf("dial %s: %s", target, resp.Status)
		}
		return false, fmt.Errorf("dial %s: %w", target, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	m.emit(Event{Kind: EventInfo, Message: "WebSocket connected: " + strings.SplitN(target, "?", 2)[1]})
	conn.SetReadLimit(64 << 20)
	return m.applyFrames(ctx, "websocket", func() ([]byte, error) {
		_, data, err := conn.ReadMessage()
		return data, err
	})
}

// applyFrames applies the frames of one live session, read by next (a
// WebSocket message, or a Server-Sent Event's data: the same frames), until
// next fails; got says a notification arrived.
func (m *Mirror) applyFrames(ctx context.Context, transport string, next func() ([]byte, error)) (got bool, err error) {
	for {
		data, err := next()
		if err != nil {
			return got, err
		}
		f, err := wire.DecodeFrame(data)
		if err != nil {
			return got, fmt.Errorf("bad frame: %w", err)
		}
		switch {
		case f.Notification != nil:
			got = true
			n := f.Notification
			if n.XML == nil {
				continue
			}
			doc, err := changefeed.Parse(bytes.NewReader([]byte(*n.XML)), changefeed.Options{Mode: changefeed.Lenient})
			if err != nil {
				m.emit(Event{Kind: EventSkipped, Seq: n.Seq, Message: "unreadable notification: " + err.Error()})
				continue
			}
			if err := m.ApplyRetrying(ctx, UpdateOf(doc, n.Seq, transport)); err != nil {
				return got, err
			}
		case f.Gap != nil:
			m.emit(Event{Kind: EventWarning, Message: fmt.Sprintf("hub: sequences %d-%d are gone: %s", f.Gap.From, f.Gap.To, f.Gap.Message)})
		case f.Live != nil:
			m.emit(Event{Kind: EventInfo, Seq: f.Live.Seq, Message: "replay done, following live"})
			if c, err := wire.ParseCursor(f.Live.ID); err == nil && c.Epoch != "" {
				if err := m.noteCursor(c, false); err != nil {
					return got, err
				}
			}
		case f.Reset != nil:
			m.emit(Event{Kind: EventWarning, Seq: f.Reset.Since, Message: fmt.Sprintf("hub: log %s reset the cursor: %s", f.Reset.Epoch, f.Reset.Message)})
			if err := m.noteCursor(wire.Cursor{Epoch: f.Reset.Epoch, Seq: f.Reset.Since}, true); err != nil {
				return got, err
			}
		}
	}
}
