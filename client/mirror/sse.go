package mirror

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/rshub/rshub/wire"
)

// SSEConfig says where a hub's Server-Sent Events endpoint is (/events at
// the hub URL's origin): the same fields as a WebSocket session's.
type SSEConfig = WebSocketConfig

// RunSSE is RunWebSocket over the hub's Server-Sent Events endpoint, for
// destinations behind proxies that pass plain HTTP responses but not
// WebSocket upgrades: the same replay, frames, reset and filters.
func (m *Mirror) RunSSE(ctx context.Context, cfg SSEConfig) error {
	client := m.cfg.Client
	return m.runSessions(ctx, "Server-Sent Events", func(ctx context.Context) (bool, error) { return m.sseSession(ctx, client, cfg) })
}

// sseSession runs one event stream; ok says it delivered something.
func (m *Mirror) sseSession(ctx context.Context, client *http.Client, cfg SSEConfig) (bool, error) {
	st := m.State()
	channels := []string{cfg.Channel}
	if fw := m.frameworkChannel(ctx, cfg.Channel, !m.cfg.Filter.IsZero()); fw != "" {
		channels = append(channels, fw)
	}
	target, err := sessionURL(wire.EventsURL, cfg.Hub, channels, st.Seq, st.Epoch, st.Until, m.cfg.Filter)
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, fmt.Errorf("mirror: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.Token)
	}
	// the stream lasts as long as the session: no client timeout applies
	stream := &http.Client{Transport: client.Transport, CheckRedirect: client.CheckRedirect}
	resp, err := stream.Do(req)
	if err != nil {
		return false, fmt.Errorf("GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return false, fmt.Errorf("GET %s: %s (%s)", target, resp.Status, resp.Header.Get("Content-Type"))
	}
	m.emit(Event{Kind: EventInfo, Message: "event stream open: " + strings.SplitN(target, "?", 2)[1]})
	events := wire.NewEventReader(resp.Body)
	return m.applyFrames(ctx, "sse", func() ([]byte, error) {
		ev, err := events.Next()
		return []byte(ev.Data), err
	})
}
