package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboard_FeedResetsWhenTheHubsLogIsRebuilt opens the dashboard, over
// WebSockets and, through a proxy that blocks them, over Server-Sent
// Events; the hub is stopped and started again on the same port with a
// fresh data directory, a new log whose sequences repeat the old ones.
// The page resumes with its cursor (since=, Last-Event-ID), which names the
// old log: the hub answers with a reset, and the page clears its feed,
// says so, and shows the new log's notifications, never mixing the two.
func TestDashboard_FeedResetsWhenTheHubsLogIsRebuilt(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	for _, transport := range []string{"websocket", "sse"} {
		t.Run(transport, func(t *testing.T) {
			h := newRestartableHub(t)
			h.start()
			t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
			publish := func(i int, what string) {
				dh := &dashHub{url: h.url, token: h.cfg.AdminToken}
				at := t0.Add(time.Duration(i) * time.Minute)
				dh.publish(t, h.url+"topics/demo", at, at.Add(time.Minute), dashEntry{fmt.Sprintf("https://library.example.org/%s/%d", what, i), "updated"})
			}
			for i := range 3 {
				publish(i, "old")
			}
			page := h.url + "dashboard/"
			if transport == "sse" {
				page = newNoWebSocketProxy(t, h.url).srv.URL + "/dashboard/"
			}
			b := newDashBrowser(t, 3*time.Minute)
			b.run("open the dashboard", chromedp.Navigate(page+"#token="+h.cfg.AdminToken))
			b.waitFor("the feed live with the old log's 3 notifications", 30*time.Second, fmt.Sprintf(`document.body.dataset.feed === %q &&
				document.querySelector("#ws-status").textContent.startsWith("feed: live") &&
				document.querySelectorAll("#feed li.note").length === 3`, transport))

			h.stop()
			b.waitFor("the page noticing the hub is gone", 30*time.Second, `!document.querySelector("#ws-status").textContent.startsWith("feed: live")`)
			h.cfg.DataDir = t.TempDir()
			h.start()
			for i := range 2 {
				publish(i, "new")
			}
			b.waitFor("the feed reset, showing only the new log", 60*time.Second, `document.querySelector("#feed li.reset") !== null &&
				document.querySelector("#ws-status").textContent.startsWith("feed: live") &&
				document.querySelectorAll("#feed li.note").length === 2 &&
				Array.from(document.querySelectorAll("#feed li.note .loc")).every(e => e.textContent.includes("/new/"))`)
			notice, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("#feed li.reset").textContent`))
			if err != nil || len(notice) == 0 {
				t.Fatalf("reset notice %q: %v", notice, err)
			}
			t.Logf("notice: %s", notice)
		})
	}
}
