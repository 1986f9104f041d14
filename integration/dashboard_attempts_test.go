package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/internal/browsertest"

	"github.com/rshub/rshub/hub"
)

// TestDashboard_AttemptLogShowsWhyAndRedrives drives the attempt log dialog
// in headless Chromium as an operator would: a callback in maintenance
// answers 503 with Retry-After and a reason; the operator finds its
// subscription by searching, opens its attempts, reads why it fails (the
// status, the callback's reason and Retry-After, when the next attempt
// comes), narrows the log by status, and once the callback is back,
// redrives the dead letter from the same dialog and watches the next
// delivery succeed there.
func TestDashboard_AttemptLogShowsWhyAndRedrives(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	h := startDashHub(t)
	books := h.putChannel(t, "books")
	var down atomic.Bool
	down.Store(true)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if down.Load() {
			w.Header().Set("Retry-After", "1") // the host pauses for it: keep the test short
			http.Error(w, "maintenance until 10:00 UTC", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(cb.Close)
	callback := cb.URL + "/maintenance-hook"
	h.subscribe(t, books, callback)
	subID := hub.SubscriptionID(books, callback)
	subRow := fmt.Sprintf(`#subs tr[data-sub-id=%q]:not(.deadletters)`, subID)

	b := newDashBrowser(t, 3*time.Minute)
	b.run("open the dashboard", chromedp.Navigate(strings.TrimSuffix(h.url, "/")+"/dashboard/#token="+h.token))
	b.waitFor("the subscription listed", 20*time.Second, fmt.Sprintf(`!!document.querySelector(%q)`, subRow))

	t0 := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	h.publish(t, books, t0, t0.Add(10*time.Minute), dashEntry{"https://library.example.org/books/moby-dick", "created"})
	b.waitFor("the subscription failing", 20*time.Second, fmt.Sprintf(`document.querySelector(%q).dataset.state === "failing"`, subRow))

	// Find it by its callback and open its attempts.
	b.run("search the callback", chromedp.SendKeys(chromedp.CSS("#subs-search"), "maintenance-hook"))
	b.waitFor("the one match", 20*time.Second, `document.querySelectorAll("#subs tbody tr[data-sub-id]:not(.deadletters)").length === 1`)
	b.run("open its attempts", browsertest.Click(subRow+" button.attempts"))
	b.waitFor("the three failed attempts", 20*time.Second, fmt.Sprintf(`document.querySelector("#attempts").dataset.subId === %q &&
		document.querySelectorAll('#att-table tbody tr[data-status="503"]').length === 3`, subID))
	why := b.text("#att-why")
	for _, want := range []string{"Failing", "503", "retry after 1", "maintenance until 10:00 UTC", "no retry"} {
		if !strings.Contains(why, want) {
			t.Errorf("the dialog says %q, want it to name %q", why, want)
		}
	}
	if got := b.text("#att-table tbody tr:first-child td:nth-child(3)"); got != "3" {
		t.Errorf("the newest attempt is number %q, want 3", got)
	}
	b.waitFor("the response detail with Retry-After", 5*time.Second,
		`[...document.querySelectorAll("#att-table .att-detail dt")].some(dt => dt.textContent === "Retry-After")`)
	b.waitFor("a next attempt time on the earlier attempts", 5*time.Second,
		`document.querySelector("#att-table tbody tr:nth-child(2) td:nth-child(7)").textContent !== "—"`)
	b.screenshot("attempts_1_failing")

	// The status filter narrows the log.
	pick := func(value string) {
		t.Helper()
		js := fmt.Sprintf(`(() => { const s = document.querySelector("#att-status"); s.value = %q; s.dispatchEvent(new Event("change")); return true; })()`, value)
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err != nil {
			b.fail("pick status "+value, err)
		}
	}
	pick("2xx")
	b.waitFor("no 2xx attempt", 10*time.Second, `document.querySelector("#att-table tbody td.empty")?.textContent === "no 2xx attempt in the log"`)
	pick("5xx")
	b.waitFor("the 503s again", 10*time.Second, `document.querySelectorAll('#att-table tbody tr[data-status="503"]').length === 3`)
	pick("")

	// The callback is back: redrive the dead letter from the dialog.
	down.Store(false)
	b.waitFor("the dead letter in the dialog", 10*time.Second, `!!document.querySelector("#att-dead .dl button.redrive")`)
	b.run("click redrive", browsertest.Click("#att-dead .dl button.redrive"))
	b.waitFor("the dead letter gone", 15*time.Second, `!document.querySelector("#att-dead .dl") && document.querySelector("#att-dead").textContent === "no dead letters"`)
	b.waitFor("the redrive confirmed", 5*time.Second, `document.querySelector("#toast").textContent.startsWith("Delivered seq")`)

	// The next notification is delivered: the dialog shows it on top.
	h.publish(t, books, t0.Add(10*time.Minute), t0.Add(20*time.Minute), dashEntry{"https://library.example.org/books/ulysses", "updated"})
	b.waitFor("the delivery on top", 20*time.Second, `document.querySelector("#att-table tbody tr:first-child").dataset.status === "204" &&
		document.querySelector("#att-why").textContent.startsWith("Delivering")`)
	b.screenshot("attempts_2_delivering")
	b.run("close the dialog", browsertest.Click("#att-close"))
	b.waitFor("the dialog closed", 5*time.Second, `document.querySelector("#attempts").hidden`)

	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}
