package pull_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// A Change List that closes is rendered ahead by Run, so its first GET is
// answered from memory, not streamed from the log.
func TestPull_ClosedListsRenderedAhead(t *testing.T) {
	e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 10}}, "a")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = e.pull.Run(ctx) }()
	h := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	s1 := e.notify("a", h(0), h(10), entries(h(0), h(10), 8, 1))
	e.notify("a", h(10), h(20), entries(h(10), h(20), 8, 2)) // 16 > 10: the first list closes
	testenv.Eventually(t, 10*time.Second, func() bool { return e.pull.CacheStats().Lists == 1 }, "closed list never rendered ahead")
	before := e.pull.CacheStats()
	resp, body := e.get(http.MethodGet, e.base+wire.ChangeListFilePath("a", s1))
	if resp.StatusCode != 200 || len(body) == 0 {
		t.Fatalf("GET closed list: %d", resp.StatusCode)
	}
	after := e.pull.CacheStats()
	if after.Misses != before.Misses || after.Hits != before.Hits+1 {
		t.Fatalf("GET was not a cache hit: before %+v after %+v", before, after)
	}
}

// The open Change List is rendered once per version: a second GET before
// the next notification is served from memory, and a new notification
// gives a new version.
func TestPull_OpenListRenderedOncePerVersion(t *testing.T) {
	e := newEnv(t, pull.Config{}, "a")
	h := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	e.notify("a", h(0), h(10), entries(h(0), h(10), 5, 1))
	get := func() []byte {
		resp, body := e.get(http.MethodGet, e.base+"/channels/a/changelist.xml")
		if resp.StatusCode != 200 {
			t.Fatalf("GET open list: %d", resp.StatusCode)
		}
		return body
	}
	first := get()
	before := e.pull.CacheStats()
	if again := get(); string(again) != string(first) {
		t.Fatal("the same version served different bytes")
	}
	if after := e.pull.CacheStats(); after.Hits != before.Hits+1 || after.Misses != before.Misses {
		t.Fatalf("second GET not a cache hit: before %+v after %+v", before, after)
	}
	e.notify("a", h(10), h(20), entries(h(10), h(20), 3, 2))
	if next := get(); strings.Count(string(next), "<url>") != 8 {
		t.Fatalf("after a new notification the open list has %d entries, want 8", strings.Count(string(next), "<url>"))
	}
}
