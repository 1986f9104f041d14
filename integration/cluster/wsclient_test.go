package cluster_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/internal/testenv"
)

// wsClient is a WebSocket session on one hub that records the notification
// numbers it receives.
type wsClient struct {
	mu  sync.Mutex
	got map[int]bool
}

// dialWS opens /ws?channels=cluster live on hub.
func dialWS(t *testing.T, hubURL string) *wsClient {
	t.Helper()
	u := "ws" + strings.TrimPrefix(hubURL, "http") + "ws?channels=cluster"
	conn, resp, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", u, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	w := &wsClient{got: map[int]bool{}}
	// a live-only session starts at the log's end when the hub has set it
	// up: wait for its "live" frame, so what is published next is after it
	live := make(chan struct{})
	go func() {
		defer func() {
			select {
			case <-live:
			default:
				close(live)
			}
		}()
		for {
			var f struct {
				Type    string `json:"type"`
				Entries []struct {
					Loc string `json:"loc"`
				} `json:"entries"`
			}
			if err := conn.ReadJSON(&f); err != nil {
				return
			}
			if f.Type == "live" {
				select {
				case <-live:
				default:
					close(live)
				}
			}
			w.mu.Lock()
			for _, e := range f.Entries {
				if n, err := strconv.Atoi(strings.TrimPrefix(e.Loc, "http://example.com/n/")); err == nil {
					w.got[n] = true
				}
			}
			w.mu.Unlock()
		}
	}()
	select {
	case <-live:
	case <-time.After(30 * time.Second):
		t.Fatalf("no live frame from %s within 30s", u)
	}
	return w
}

// expect waits until the session has received every number in want.
func (w *wsClient) expect(t *testing.T, want []int, timeout time.Duration) {
	t.Helper()
	testenv.Eventually(t, timeout, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, n := range want {
			if !w.got[n] {
				return false
			}
		}
		return true
	}, "the WebSocket client on hub 2 missed notifications published through other hubs")
}
