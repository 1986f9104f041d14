package walkthrough_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/internal/browsertest"
)

// trackEventSources makes the page keep every EventSource it opens in
// window.walkSources, so the step can wait until they are open.
const trackEventSources = `(() => {
  const Native = window.EventSource;
  window.walkSources = [];
  window.EventSource = function (url, init) {
    const es = new Native(url, init);
    window.walkSources.push(es);
    return es;
  };
  return true;
})()`

// startBrowserStep runs a js block of the README in headless Chromium, in
// a page of the hub's origin (http://hubAddr): what the page logs to its
// console (console.log's arguments, and any exception) is written to out.
// It returns once every EventSource the block opened is open.
func startBrowserStep(t *testing.T, where, hubAddr, js string, out *output) {
	t.Helper()
	ctx := browsertest.Start(t, 5*time.Minute)
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			fmt.Fprintln(out, m.Text)
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+hubAddr+"/readyz")); err != nil {
		t.Fatalf("%s: open a page of the hub's origin: %v", where, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](trackEventSources)); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js+"\n;true")); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, out)
	}
	open := `window.walkSources.length > 0 && window.walkSources.every((es) => es.readyState === 1)`
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](open, chromedp.WithPollingTimeout(time.Minute), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("%s: its EventSource did not open: %v\n%s", where, err, out)
	}
}
