package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/internal/browsertest"
)

// dashBrowser is a headless Chromium tab driven over the DevTools
// protocol.
type dashBrowser struct {
	t   *testing.T
	ctx context.Context

	mu     sync.Mutex
	errors []string // uncaught exceptions and console errors of the page
}

// newDashBrowser starts headless Chromium with a laptop-sized window and a
// fresh profile; it ends with the test or at timeout.
func newDashBrowser(t *testing.T, timeout time.Duration) *dashBrowser {
	t.Helper()
	ctx := browsertest.Start(t, timeout)
	b := &dashBrowser{t: t, ctx: ctx}
	// Uncaught exceptions and console.error calls fail the test at its
	// end; the browser's own log (a 401 answer, say) does not.
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || (m.Type == chromedp.ConsoleError && m.Source == "") {
				b.addError(m.String())
			}
		}
	}()
	return b
}

func (b *dashBrowser) addError(s string) {
	b.mu.Lock()
	b.errors = append(b.errors, s)
	b.mu.Unlock()
}

// pageErrors returns the page's exceptions and console errors so far.
func (b *dashBrowser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// run runs actions, failing the test with what the page shows.
func (b *dashBrowser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.fail(what, err)
	}
}

// waitFor polls a JavaScript condition until it is true or within is over.
func (b *dashBrowser) waitFor(what string, within time.Duration, js string) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		b.fail("waiting for "+what, err)
	}
}

// text returns the text of the first element matching a CSS selector.
func (b *dashBrowser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel)))
	if err != nil {
		b.fail("reading "+sel, err)
	}
	return s
}

// fail saves a screenshot and the page's text, then fails the test.
func (b *dashBrowser) fail(what string, err error) {
	b.t.Helper()
	b.screenshot("failure")
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	b.t.Fatalf("%s: %v\npage errors: %v\npage text:\n%s", what, err, b.pageErrors(), body)
}

// screenshot saves the viewport as a PNG test artifact.
func (b *dashBrowser) screenshot(name string) string {
	b.t.Helper()
	dir := os.Getenv("RSHUB_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Errorf("artifacts: %v", err)
		return ""
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(dir, "dashboard_"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	abs, _ := filepath.Abs(path)
	b.t.Logf("screenshot: %s", abs)
	return abs
}
