package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/changefeed"
)

// WebSocketConfig says where a hub's WebSocket endpoint is.
type WebSocketConfig struct {
	Hub     string // hub URL; the endpoint is /ws at its origin
	Channel string // the hub's channel name
	Token   string // optional, sent as Authorization: Bearer
}

// wsFrame is any frame the hub sends (see the delivery package).
type wsFrame struct {
	Type    string  `json:"type"`
	Seq     uint64  `json:"seq"`
	XML     *string `json:"xml"`
	From    uint64  `json:"missing_from_seq"`
	To      uint64  `json:"missing_to_seq"`
	Message string  `json:"message"`
}

// wsURL builds the session URL: replay after seq when known, else after
// the Source time P, else from the live end.
func wsURL(hub, channel string, seq uint64, p time.Time) (string, error) {
	u, err := url.Parse(hub)
	if err != nil {
		return "", fmt.Errorf("mirror: hub URL: %w", err)
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	q := url.Values{"channels": {channel}, "raw": {"1"}}
	switch {
	case seq > 0:
		q.Set("since", strconv.FormatUint(seq, 10))
	case !p.IsZero():
		q.Set("since_time", p.UTC().Format(time.RFC3339Nano))
	default:
		q.Set("since", "0")
	}
	u.Path, u.RawQuery, u.Fragment = "/ws", q.Encode(), ""
	return u.String(), nil
}

// RunWebSocket consumes the hub's WebSocket for the channel: it replays
// from the state's sequence (or Source time), then follows live, applying
// each notification; it reconnects after failures, until ctx ends. Call
// Start (or Run with a nil channel) for the baseline.
func (m *Mirror) RunWebSocket(ctx context.Context, cfg WebSocketConfig) error {
	if err := m.retry(ctx, "start-up catch-up", func() error { return m.Start(ctx) }); err != nil {
		return err
	}
	for n := 1; ; n++ {
		ok, err := m.wsSession(ctx, cfg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ok {
			n = 1
		}
		pause := retryPause(n)
		m.emit(Event{Kind: EventWarning, Message: fmt.Sprintf("WebSocket session ended (%v); reconnecting in %s", err, pause)})
		if !sleep(ctx, pause) {
			return ctx.Err()
		}
	}
}

// wsSession runs one connection; ok says it delivered something.
func (m *Mirror) wsSession(ctx context.Context, cfg WebSocketConfig) (bool, error) {
	st := m.State()
	target, err := wsURL(cfg.Hub, cfg.Channel, st.Seq, st.Until)
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
	got := false
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			return got, err
		}
		var f wsFrame
		if err := json.Unmarshal(data, &f); err != nil {
			return got, fmt.Errorf("bad frame: %w", err)
		}
		switch f.Type {
		case "notification":
			got = true
			if f.XML == nil {
				continue
			}
			doc, err := changefeed.Parse(bytes.NewReader([]byte(*f.XML)), changefeed.Options{Mode: changefeed.Lenient})
			if err != nil {
				m.emit(Event{Kind: EventSkipped, Seq: f.Seq, Message: "unreadable notification: " + err.Error()})
				continue
			}
			if err := m.ApplyRetrying(ctx, UpdateOf(doc, f.Seq, "websocket")); err != nil {
				return got, err
			}
		case "gap":
			m.emit(Event{Kind: EventWarning, Message: fmt.Sprintf("hub: sequences %d-%d are gone: %s", f.From, f.To, f.Message)})
		case "live":
			m.emit(Event{Kind: EventInfo, Seq: f.Seq, Message: "replay done, following live"})
		}
	}
}
