package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/internal/browsertest"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// privateHub starts a whole hub with a private hosted channel "secret"
// (publishers use its token) and the open demo channel, subscriber tokens
// signed with an HMAC secret, and one notification on each, secret first.
func privateHub(t *testing.T) (base string, k *accesstest.Keys) {
	k = accesstest.NewSecret(t)
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "secret", "hosted": true, "token": "secret-publisher-token", "private": true}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, func(c *server.Config) {
		c.ChannelsFile, c.SubscriberJWTKey, c.AdminToken = chans, k.Secret, token
	})
	base = "http://" + st.Addr
	for _, name := range []string{"secret", "demo"} {
		now := time.Now().UTC().Truncate(time.Second)
		body := fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.com/%s</loc><rs:md change="created" datetime="%s"/></url>
</urlset>`, now.Add(-time.Second).Format(time.RFC3339), now.Format(time.RFC3339), name, now.Format(time.RFC3339))
		req, _ := http.NewRequest(http.MethodPost, st.HubURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+base+wire.TopicPath(name)+`>; rel="self", <`+st.HubURL+`>; rel="hub"`)
		req.Header.Set("Authorization", "Bearer secret-publisher-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("publish to %s: %d %s", name, resp.StatusCode, b)
		}
	}
	return base, k
}

// listen opens an EventSource on every channel from the start (query
// appended) and collects the channels of its notifications in window.got.
func listen(query string) string {
	return `window.got = []; window.es = new EventSource("/events?channels=*&since=0` + query + `");
window.es.addEventListener("notification", e => window.got.push(JSON.parse(e.data).channel)); true`
}

// In headless Chromium, a page whose EventSource carries a subscriber
// token (query parameter or the mercureAuthorization cookie) receives the
// private channel's notifications; a page without one receives the public
// channel's and nothing of the private one, nor sees it in the Source
// Description.
func TestPrivateChannel_PageWithATokenSeesItOneWithoutDoesNot(t *testing.T) {
	base, k := privateHub(t)
	tok := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{base + "/topics/{name}"}, nil, time.Now().Add(time.Hour).Unix(), 0))
	ctx, exceptions := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/robots.txt")); err != nil {
		t.Fatal(err)
	}
	run := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}

	run(listen(""))
	waitJS(t, ctx, "the public notification without a token", 20*time.Second, `window.got.includes("demo")`)
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.got`)); strings.Contains(strings.Join(got, ","), "secret") {
		t.Fatalf("a page without a token received %v", got)
	}
	run(`window.es.close(); window.sd = ""; fetch("/.well-known/resourcesync").then(r => r.text()).then(t => window.sd = t); true`)
	waitJS(t, ctx, "the Source Description", 10*time.Second, `window.sd.includes("/channels/demo/")`)
	if sd, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.sd`)); strings.Contains(sd, "secret") {
		t.Fatalf("the Source Description names the private channel to a page without a token")
	}

	run(`window.es.close(); ` + listen("&authorization="+tok))
	waitJS(t, ctx, "the private notification with a token in the query", 20*time.Second, `window.got.includes("secret") && window.got.includes("demo")`)

	run(`window.es.close(); document.cookie = "mercureAuthorization=` + tok + `; path=/; SameSite=Strict"; ` + listen(""))
	waitJS(t, ctx, "the private notification with the token in a cookie", 20*time.Second, `window.got.includes("secret") && window.got.includes("demo")`)
	if errs := exceptions(); len(errs) > 0 {
		t.Fatalf("page exceptions: %v", errs)
	}
}

// The dashboard's follow form creates a private channel when "private" is
// ticked, and the channel table says so.
func TestDashboard_FollowFormCreatesAPrivateChannel(t *testing.T) {
	base, _ := privateHub(t)
	ctx, exceptions := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/dashboard/#token="+token)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the follow form", 20*time.Second, `!!document.getElementById("follow-private")`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#follow-name"), "pulled"),
		chromedp.SendKeys(chromedp.CSS("#follow-url"), "http://127.0.0.1:1/.well-known/resourcesync"),
		browsertest.Click("#follow-private"),
		browsertest.Click("#follow-form button[type=submit]"),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the private channel in the table", 20*time.Second,
		`[...document.querySelectorAll("#channels tr[data-channel=pulled] td")].some(td => td.textContent.includes("private"))`)
	req, _ := http.NewRequest(http.MethodGet, base+"/admin/channels/pulled", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ch struct {
		Private bool `json:"private"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ch); err != nil || !ch.Private {
		t.Fatalf("GET /admin/channels/pulled: %v, private %v", err, ch.Private)
	}
	if errs := exceptions(); len(errs) > 0 {
		t.Fatalf("page exceptions: %v", errs)
	}
}
