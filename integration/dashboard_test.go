package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/internal/browsertest"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/server"
)

// TestDashboard_LiveFeedFailingSubscriptionAndRedrive drives the dashboard
// in headless Chromium the way an operator would: give the admin token,
// watch a publish appear live, see a failing callback marked failing with
// its dead letter, fix the callback, click redrive and see the dead letter
// delivered and gone.
func TestDashboard_LiveFeedFailingSubscriptionAndRedrive(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	h := startDashHub(t)
	books := h.putChannel(t, "books")
	demo := h.putChannel(t, "demo") // the --demo channel, read back with its topic
	cb := newDashCallback(t, http.StatusInternalServerError)
	callback := cb.srv.URL + "/hooks/books?mirror=1"
	h.subscribe(t, books, callback)
	subID := hub.SubscriptionID(books, callback)
	subRow := fmt.Sprintf(`#subs tr[data-sub-id=%q]:not(.deadletters)`, subID)
	dlRow := fmt.Sprintf(`#subs tr.deadletters[data-sub-id=%q]`, subID)

	b := newDashBrowser(t, 3*time.Minute)
	page := strings.TrimSuffix(h.url, "/") + "/dashboard/"

	// Without a token the page asks for one, and says so when the hub
	// refuses it.
	b.run("open the dashboard", chromedp.Navigate(page))
	b.run("see the token form", chromedp.WaitVisible(chromedp.CSS("#login-token")))
	b.run("type a wrong token",
		chromedp.SendKeys(chromedp.CSS("#login-token"), "not-the-token"),
		browsertest.Click("#login-form button[type=submit]"))
	b.waitFor("the refusal", 10*time.Second, `!document.querySelector("#login").hidden && document.querySelector("#login-error").textContent.includes("refused")`)

	// A token in the URL fragment is taken, kept in sessionStorage and
	// removed from the address bar.
	b.run("open the dashboard with #token=", chromedp.Navigate(page+"#token="+h.token))
	b.waitFor("the feed to go live", 20*time.Second, `document.querySelector("#ws-status").textContent === "feed: live"`)
	b.waitFor("the token in sessionStorage only", 5*time.Second,
		fmt.Sprintf(`sessionStorage.getItem("rshub.adminToken") === %q && location.hash === "" && document.querySelector("#login").hidden`, h.token))
	b.run("reload", chromedp.Reload())
	b.waitFor("the feed live again without asking", 20*time.Second, `document.querySelector("#ws-status").textContent === "feed: live" && document.querySelector("#login").hidden`)
	b.waitFor("the subscription listed as active", 20*time.Second, fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.state === "active"`, subRow))

	// A publish appears live, with its entries' change types.
	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	first := h.publish(t, books, t0, t0.Add(10*time.Minute),
		dashEntry{"https://library.example.org/books/moby-dick", "created"},
		dashEntry{"https://library.example.org/books/war-and-peace", "updated"},
		dashEntry{"https://library.example.org/books/ulysses", "deleted"})
	b.waitFor("the books notification in the live feed", 10*time.Second,
		`[...document.querySelectorAll('#feed li.note[data-channel="books"] .entries li')].some(li =>
			li.querySelector(".loc").textContent === "https://library.example.org/books/ulysses" &&
			li.querySelector(".change").textContent === "deleted")`)
	h.publish(t, demo, t0, t0.Add(5*time.Minute), dashEntry{"https://data.example.org/demo/item-1", "created"})
	b.waitFor("the demo notification in the live feed", 10*time.Second,
		`!!document.querySelector('#feed li.note[data-channel="demo"]')`)
	if got := b.text(`#feed li.note[data-channel="books"] .window`); got != "2025-03-14 09:00:00Z → 09:10:00Z" {
		t.Errorf("feed shows the window %q, want from → until", got)
	}
	b.waitFor("the channels table counting the publishes", 10*time.Second,
		`document.querySelector('#channels tr[data-channel="books"] td:nth-child(3)').textContent === "1" &&
		 document.querySelector('#channels tr[data-channel="books"] td:nth-child(5)').textContent === "2025-03-14 09:10:00Z"`)
	b.screenshot("1_live_feed")

	// The callback answers 500: the subscription is marked failing and
	// the notification lands in its dead letters.
	b.waitFor("the subscription marked failing", 20*time.Second, fmt.Sprintf(`document.querySelector(%q).dataset.state === "failing"`, subRow))
	b.waitFor("its dead letter with a redrive button", 20*time.Second, fmt.Sprintf(`!!document.querySelector(%q)`, dlRow+" .dl button.redrive"))
	if got := b.text(subRow + " td:nth-child(4)"); !strings.Contains(got, "HTTP 500") {
		t.Errorf("last delivery shows %q, want HTTP 500", got)
	}
	b.screenshot("2_failing_dead_letter")

	// Fixed callback, redrive clicked: delivered, the dead letter goes.
	cb.setStatus(http.StatusNoContent)
	b.run("click redrive", browsertest.Click(dlRow+" .dl button.redrive"))
	b.waitFor("the dead letter gone", 15*time.Second,
		fmt.Sprintf(`!document.querySelector(%q) && document.querySelector(%q).textContent === "0"`, dlRow, subRow+" td:nth-child(6)"))
	b.waitFor("the redrive confirmed", 5*time.Second, `document.querySelector("#toast").textContent.startsWith("Delivered seq")`)
	if !cb.got(first) {
		t.Error("the callback never accepted the redriven notification")
	}

	// The next publish (after a gap in Source time) is delivered: the
	// subscription is active again, the gap shows on the channel, and the
	// chart has counted the publishes.
	second := h.publish(t, books, t0.Add(30*time.Minute), t0.Add(40*time.Minute),
		dashEntry{"https://library.example.org/books/dubliners", "created"})
	b.waitFor("the subscription active again", 20*time.Second, fmt.Sprintf(`document.querySelector(%q).dataset.state === "active"`, subRow))
	if !cb.got(second) {
		t.Error("the callback did not get the notification published after the fix")
	}
	b.waitFor("the gap on the books channel", 10*time.Second, `(document.querySelector('#channels tr[data-channel="books"] .gaps') || {}).textContent?.startsWith("1 gap")`)
	b.waitFor("the throughput chart", 10*time.Second, `Number(document.querySelector("#chart").dataset.peak) > 0`)
	b.screenshot("3_redriven")

	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// TestDashboard_ThroughputHistoryOnPageLoad publishes a burst before the
// page opens: the chart draws it from the hub's per-second ring, and the
// feed replays the most recent notifications. The WebSocket endpoint needs
// its own token here, which the page gets from the dashboard API.
func TestDashboard_ThroughputHistoryOnPageLoad(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	h := startDashHub(t, func(c *server.Config) { c.WSToken = "ws-only-token" })
	const perChannel = 40
	t0 := time.Date(2025, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"arxiv", "dbpedia", "books"} {
		topic := h.putChannel(t, name)
		for i := range perChannel {
			from := t0.Add(time.Duration(i) * time.Minute)
			h.publish(t, topic, from, from.Add(time.Minute),
				dashEntry{fmt.Sprintf("https://%s.example.org/item/%d", name, i), []string{"created", "updated", "deleted"}[i%3]})
		}
	}

	b := newDashBrowser(t, 2*time.Minute)
	b.run("open the dashboard", chromedp.Navigate(strings.TrimSuffix(h.url, "/")+"/dashboard/#token="+h.token))
	b.waitFor("the feed to go live", 20*time.Second, `document.querySelector("#ws-status").textContent === "feed: live"`)
	b.waitFor("the burst in the chart", 10*time.Second,
		fmt.Sprintf(`document.querySelector("#rate-now").textContent.endsWith(" %d in window") && Number(document.querySelector("#chart").dataset.peak) > 1`, 3*perChannel))
	b.waitFor("the recent notifications replayed", 10*time.Second, `document.querySelectorAll("#feed li.note").length === 25`)
	// The replay holds the 25 latest, all of books (published last): the
	// filter hides them for arxiv and shows them all for books.
	for _, tc := range []struct{ channel, want string }{
		{"arxiv", `shown.length === 0`},
		{"books", `shown.length === 25 && shown.every(li => li.dataset.channel === "books")`},
		{"", `shown.length === 25`},
	} {
		choose := fmt.Sprintf(`(() => { const s = document.querySelector("#feed-filter"); s.value = %q; s.dispatchEvent(new Event("change")); })()`, tc.channel)
		b.run("filter the feed by "+tc.channel, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](choose)(ctx, tg)
			return err
		}))
		b.waitFor("the feed filtered by "+tc.channel, 5*time.Second, `(() => {
			const shown = [...document.querySelectorAll("#feed li.note")].filter(li => getComputedStyle(li).display !== "none");
			return `+tc.want+`;
		})()`)
	}
	b.screenshot("4_burst_history")
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
