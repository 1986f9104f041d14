package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// A JWKS URL that answers 500 is counted (rshub_jwks_failures_total),
// logged at WARN with its URL, and shown by /readyz as degraded; the
// caller's refusal says only that the key set is unavailable.
func TestJWKS_FailureCountedLoggedDegradedAndNotDescribed(t *testing.T) {
	var hits atomic.Int64
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "internal detail: db down", http.StatusInternalServerError)
	}))
	defer jwks.Close()
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "secret", "hosted": true, "trust": "open", "private": true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	st := servertest.Start(t, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})), func(c *server.Config) {
		c.ChannelsFile, c.SubscriberJWKSURL, c.AllowNetworks = chans, jwks.URL+"/keys", "127.0.0.0/8"
	})
	base := "http://" + st.Addr
	k := accesstest.NewKeys(t)
	token := k.Mint(t, "RS256", map[string]any{"kid": "a"}, accesstest.Mercure([]string{"*"}, nil, time.Now().Add(time.Hour).Unix(), 0))

	req, _ := http.NewRequest(http.MethodGet, base+wire.ChangeListPath("secret"), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	www := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(www, `error_description="the key set is unavailable"`) {
		t.Fatalf("the caller got %d %q, want 401 saying only that the key set is unavailable", resp.StatusCode, www)
	}
	if hits.Load() == 0 {
		t.Fatal("the key set was never read")
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		_, b := get(t, base+"/metrics")
		return strings.Contains(b, `rshub_jwks_failures_total{role="subscriber"}`)
	}, "the failure counted")
	testenv.Eventually(t, 30*time.Second, func() bool {
		s, b := get(t, base+"/readyz")
		return s == http.StatusServiceUnavailable && strings.Contains(b, "subscriber key set (--subscriber-jwks-url) unavailable since") && !strings.Contains(b, jwks.URL)
	}, "/readyz degraded, naming no URL")
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, jwks.URL) || !strings.Contains(l, "500") {
		t.Fatalf("no WARN line with the URL and the answer:\n%s", l)
	}
}
