package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	pullsource "github.com/rshub/rshub/examples/pullsource/source"
)

// The dashboard's Followed Sources card shows a followed channel's gap
// (a Source restarted without its history and without an archive), with
// its window in the cell's title.
func TestFollowDashboard_ShowsTheGapOfARestartedSource(t *testing.T) {
	t.Parallel() // waits far more than it computes: runs beside the other such tests
	src := startFollowSource(t, pullsource.Config{Mode: pullsource.ModeSimulator})
	h := startFollowHub(t)
	rcv := newFollowReceiver(t)
	followChannel(t, h, map[string]any{"name": "restarted", "follow": "http://" + src.addr + "/", "pollInterval": "20ms"}, rcv)
	bursts(t, src, rcv, nil, 0, 3)
	before := src.src.History()
	src.src.Reset()
	bursts(t, src, rcv, before, 1, 2)

	b := newDashBrowser(t, 2*time.Minute)
	cell := `#follows tr[data-channel="restarted"] td:nth-child(7)`
	b.run("open the dashboard", chromedp.Navigate(strings.TrimSuffix(h.url, "/")+"/dashboard/#token="+h.token))
	b.waitFor("the gap in the Followed Sources card", 20*time.Second,
		fmt.Sprintf(`(() => { const c = document.querySelector(%q); return !!c && c.textContent === "0 · 1 gap" && c.title.startsWith("last gap ") && c.classList.contains("warn"); })()`, cell))
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("page errors: %v", errs)
	}
}
