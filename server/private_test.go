package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// get answers GET u with headers given as name, value pairs: status,
// body.
func get(t *testing.T, u string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A whole hub with --subscriber-jwt-key and --publisher-jwt-key serves a
// private channel of its --channels file only to tokens minted for it:
// publish, pull mode, Server-Sent Events and the Source Description.
func TestPrivateChannel_WholeHub(t *testing.T) {
	k := accesstest.NewSecret(t)
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "secret", "hosted": true, "trust": "open", "private": true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, func(c *server.Config) {
		c.ChannelsFile, c.SubscriberJWTKey, c.PublisherJWTKey = chans, k.Secret, k.Secret
	})
	base := "http://" + st.Addr
	topic := base + wire.TopicPath("secret")
	exp := time.Now().Add(time.Hour).Unix()
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{topic}, nil, exp, 0))
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{base + "/topics/{name}"}, exp, 0))

	now := time.Now().UTC().Truncate(time.Second)
	body := fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.com/r1</loc><rs:md change="created" datetime="%s"/></url>
</urlset>`, now.Add(-time.Second).Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339))
	post := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, st.HubURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+topic+`>; rel="self", <`+st.HubURL+`>; rel="hub"`)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := post(""); s != 404 {
		t.Fatalf("publish without a token: %d, want 404", s)
	}
	if s := post(reader); s != 403 {
		t.Fatalf("publish with a subscriber's token: %d, want 403", s)
	}
	if s := post(writer); s != 200 {
		t.Fatalf("publish with a publisher's token: %d", s)
	}

	if s, b := get(t, base+wire.PathWellKnown); s != 200 || strings.Contains(b, "secret") {
		t.Fatalf("Source Description without a token: %d %s", s, b)
	}
	if s, b := get(t, base+wire.PathWellKnown, "Authorization", "Bearer "+reader); s != 200 || !strings.Contains(b, "/channels/secret/") {
		t.Fatalf("Source Description for a reader: %d %s", s, b)
	}
	if s, _ := get(t, base+wire.CapabilityListPath("secret")); s != 404 {
		t.Fatalf("Capability List without a token: %d", s)
	}
	if s, _ := get(t, base+wire.ChangeListPath("secret")+"?authorization="+reader); s != 200 {
		t.Fatalf("Change List for a reader: %d", s)
	}
	if s, _ := get(t, base+wire.PathEvents+"?channels=secret&authorization=x.y.z"); s != 401 {
		t.Fatalf("events with a bad token: %d", s)
	}
	req, _ := http.NewRequest(http.MethodGet, base+wire.PathEvents+"?channels=secret&since=0", nil)
	req.AddCookie(&http.Cookie{Name: "mercureAuthorization", Value: reader})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("events for a reader ended: %v", err)
		}
		if strings.HasPrefix(line, "event: notification") {
			break
		}
	}
}

// A hub refuses a key it cannot use before it starts anything, naming the
// setting.
func TestPrivateChannel_BadKeyRefusesTheStart(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.SubscriberJWTKey = "short"
	err := cfg.Check()
	if err == nil || !strings.Contains(err.Error(), "--subscriber-jwt-key") {
		t.Fatalf("start with a short HMAC secret: %v", err)
	}
}

// --subscriber-jwks-url is read through the hub's guarded client: a token
// signed with a key of the set (by kid) reads the private channel, one
// naming a key the set lacks gets 401 (rotation is access's
// TestJWKS_VerifiesByKidAndFollowsRotation).
func TestPrivateChannel_KeySetURL(t *testing.T) {
	k := accesstest.NewKeys(t)
	keys := []map[string]string{accesstest.JWK(t, k.RSA, "one")}
	set := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	defer set.Close()
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "secret", "hosted": true, "trust": "open", "private": true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, func(c *server.Config) { c.ChannelsFile, c.SubscriberJWKSURL = chans, set.URL })
	capa := "http://" + st.Addr + wire.CapabilityListPath("secret")
	claims := accesstest.Mercure([]string{"*"}, nil, time.Now().Add(time.Hour).Unix(), 0)
	if s, b := get(t, capa, "Authorization", "Bearer "+k.Mint(t, "RS256", map[string]any{"kid": "one"}, claims)); s != 200 {
		t.Fatalf("token of the set's key: %d %s", s, b)
	}
	if s, _ := get(t, capa, "Authorization", "Bearer "+k.Mint(t, "ES256", map[string]any{"kid": "three"}, claims)); s != 401 {
		t.Fatalf("token of a key the set lacks: %d, want 401", s)
	}
}
