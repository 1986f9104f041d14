package server_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// One grant decides every face: an access token of the current Mercure
// draft (authorization_details, typ at+jwt, aud and iss) opens a private
// channel on the hub URL (publish and WebSub subscribe), its pull-mode
// documents and the Source Description, /events and /ws as it does the
// Mercure face; a grant of another topic is refused with 403, and an
// access token for another audience with 401, on each.
func TestMercure_OneGrantDecidesEveryFace(t *testing.T) {
	h := startMercureHub(t)
	reader := h.token([]string{"subscribe"}, "exact", h.secret)
	other := h.token([]string{"subscribe"}, "exact", h.pub)
	writer := h.token([]string{"publish"}, "urlpattern", h.base+"/topics/:name")
	elsewhere := h.k.Mint(t, "HS256", map[string]any{"typ": "at+jwt"}, map[string]any{
		"exp": time.Now().Add(time.Hour).Unix(), "aud": "https://elsewhere.example/.well-known/mercure", "iss": "https://issuer.example",
		"authorization_details": []any{map[string]any{"type": access.DetailType, "actions": []string{"subscribe", "publish"}, "topics": []any{map[string]any{"match": "*"}}}},
	})
	hubURL := h.base + "/"
	do := func(method, u, contentType, body, token string, hdr ...string) int {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == 200 && strings.HasPrefix(resp.Header.Get("Content-Type"), wire.ContentTypeEventStream) {
			r := bufio.NewReader(resp.Body) // a stream: its first notification shows it reads the channel
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("%s %s: the stream ended before a notification: %v", method, u, err)
				}
				if strings.HasPrefix(line, "event: notification") {
					break
				}
			}
		}
		return resp.StatusCode
	}
	fatPing := func(token string) int {
		return do(http.MethodPost, hubURL, "application/xml", h.notification("http://example.com/a"), token,
			"Link", "<"+h.secret+`>; rel="self", <`+hubURL+`>; rel="hub"`)
	}
	if s := fatPing(reader); s != 403 {
		t.Fatalf("fat ping with a subscribe grant: %d, want 403", s)
	}
	if s := fatPing(elsewhere); s != 401 {
		t.Fatalf("fat ping with another audience's token: %d, want 401", s)
	}
	if s := fatPing(writer); s != 200 {
		t.Fatalf("fat ping with a publish grant: %d, want 200", s)
	}
	subscribe := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {h.secret}, "hub.callback": {"http://127.0.0.1:9/callback"}}.Encode()
	for _, face := range []struct {
		name, method, url, contentType, body string
		ok                                   int
	}{
		{"WebSub subscribe", http.MethodPost, hubURL, "application/x-www-form-urlencoded", subscribe, 202},
		{"Change List", http.MethodGet, h.base + wire.ChangeListPath("secret"), "", "", 200},
		{"Capability List", http.MethodGet, h.base + wire.CapabilityListPath("secret"), "", "", 200},
		{"events", http.MethodGet, h.base + wire.PathEvents + "?channels=secret&since=0", "", "", 200},
	} {
		if s := do(face.method, face.url, face.contentType, face.body, reader); s != face.ok {
			t.Errorf("%s with a covering grant: %d, want %d", face.name, s, face.ok)
		}
		if s := do(face.method, face.url, face.contentType, face.body, other); s != 403 {
			t.Errorf("%s with another topic's grant: %d, want 403", face.name, s)
		}
		if s := do(face.method, face.url, face.contentType, face.body, elsewhere); s != 401 {
			t.Errorf("%s with another audience's token: %d, want 401", face.name, s)
		}
	}
	if s, b := get(t, h.base+wire.PathWellKnown, "Authorization", "Bearer "+reader); s != 200 || !strings.Contains(b, "/channels/secret/") {
		t.Errorf("Source Description with a covering grant: %d, want the private channel listed", s)
	}
	wsURL := "ws" + strings.TrimPrefix(h.base, "http") + wire.PathWebSocket + "?channels=secret&since=0"
	for token, want := range map[string]int{reader: 101, other: 403, elsewhere: 401} {
		c, resp, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Authorization": {"Bearer " + token}})
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if status != want {
			t.Errorf("/ws: %d (%v), want %d", status, err, want)
		}
		if c == nil {
			continue
		}
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var m struct{ Type string }
		if err := c.ReadJSON(&m); err != nil || m.Type != wire.FrameNotification {
			t.Errorf("/ws with a covering grant: first frame %+v (%v), want the notification", m, err)
		}
		_ = c.Close()
	}
}
