// Package browsertest runs Debian's headless Chromium for tests, driven
// over the DevTools protocol (chromedp): a fresh profile per test, ended
// with it.
package browsertest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path finds Debian's Chromium, failing the test without it.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: the browser tests need Debian's chromium; `make test` installs it (apt-get install chromium)")
	return ""
}

// Start starts headless Chromium with a laptop-sized window and a fresh
// profile and returns the context of its first tab, which ends with the
// test or at timeout.
func Start(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Click clicks the first visible element matching the CSS selector sel
// with the mouse, as chromedp.Click does, and tries again when the page
// replaced that element between finding it and clicking it. A page that
// re-renders a table as data arrives does that, and DevTools then answers
// "Could not find node with given id" before any mouse event is sent, so
// trying again never clicks twice.
func Click(sel string) chromedp.Action[chromedp.Void] {
	const tries = 5
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range tries {
			if _, err = chromedp.Click(chromedp.CSS(sel))(ctx, t); !staleNode(err) {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, fmt.Errorf("click %s: replaced %d times in a row: %w", sel, tries, err)
	}
}

// staleNode reports whether err is DevTools saying a node it was asked
// about is no longer in the document.
func staleNode(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Could not find node with given id")
}
