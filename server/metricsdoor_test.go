package server_test

import (
	"fmt"
	"net/http"
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

// privateHub starts a hub with the open demo channel and the private
// channel "secret", publishes one notification to each, and returns it.
func privateHub(t *testing.T, options ...func(*server.Config)) server.Started {
	t.Helper()
	k := accesstest.NewSecret(t)
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "secret", "hosted": true, "trust": "open", "private": true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, append([]func(*server.Config){func(c *server.Config) {
		c.ChannelsFile, c.SubscriberJWTKey, c.PublisherJWTKey = chans, k.Secret, k.Secret
	}}, options...)...)
	base := "http://" + st.Addr
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{base + "/topics/{name}"}, time.Now().Add(time.Hour).Unix(), 0))
	now := time.Now().UTC().Truncate(time.Second)
	body := fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.com/r1</loc><rs:md change="created" datetime="%s"/></url>
</urlset>`, now.Add(-time.Second).Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339))
	req, _ := http.NewRequest(http.MethodPost, st.HubURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", "<"+base+wire.TopicPath("secret")+`>; rel="self", <`+st.HubURL+`>; rel="hub"`)
	req.Header.Set("Authorization", "Bearer "+writer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("publish to the private channel: %d", resp.StatusCode)
	}
	publish(t, st.HubURL, base+wire.TopicPath("demo"))
	return st
}

const (
	secretSeries = `rshub_publishes_total{channel="secret"} 1`
	demoSeries   = `rshub_publishes_total{channel="demo"} 1`
)

// Without --metrics-token, /metrics on the hub's listener answers anyone
// and names no private channel.
func TestMetrics_UnprotectedDoorNamesNoPrivateChannel(t *testing.T) {
	st := privateHub(t)
	s, b := get(t, "http://"+st.Addr+"/metrics")
	if s != 200 || !strings.Contains(b, demoSeries) {
		t.Fatalf("/metrics: %d, want 200 with %s", s, demoSeries)
	}
	if strings.Contains(b, "secret") {
		t.Fatalf("/metrics names the private channel to anyone:\n%s", grepLines(b, "secret"))
	}
}

// With --metrics-token, /metrics needs the token and then shows every
// series; --metrics-listen serves every series on its own listener,
// behind the token too.
func TestMetrics_TokenAndOwnListenerShowEverySeries(t *testing.T) {
	const token = "metrics-secret-token"
	st := privateHub(t, func(c *server.Config) { c.MetricsToken, c.MetricsListen = token, "127.0.0.1:0" })
	if st.MetricsAddr == "" {
		t.Fatal("no --metrics-listen address")
	}
	for _, u := range []string{"http://" + st.Addr + "/metrics", "http://" + st.MetricsAddr + "/metrics"} {
		if s, b := get(t, u); s != 401 || strings.Contains(b, "secret\"") {
			t.Fatalf("%s without the token: %d %s, want 401", u, s, b)
		}
		if s, _ := get(t, u, "Authorization", "Bearer wrong"); s != 401 {
			t.Fatalf("%s with a wrong token: %d, want 401", u, s)
		}
		s, b := get(t, u, "Authorization", "Bearer "+token)
		if s != 200 || !strings.Contains(b, secretSeries) || !strings.Contains(b, demoSeries) {
			t.Fatalf("%s with the token: %d, want 200 with %s and %s", u, s, secretSeries, demoSeries)
		}
	}
}

// grepLines returns the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
