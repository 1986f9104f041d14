package pull_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// TestPull_ClientFollowingLinksGetsEveryNotifiedEntryInOrder is the
// property: for random notification sequences (entry counts, windows, gaps,
// rotations by count and by time), the entries of the archived closed lists,
// the newer lists of the index and the open list, found by following links
// from the Source Description, equal in order the entries of all
// notifications, which is what a subscriber that saw every one received.
func TestPull_ClientFollowingLinksGetsEveryNotifiedEntryInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 6 {
		rot := changefeed.Rotation{MaxEntries: 5 + rng.IntN(60), Period: []time.Duration{0, 30 * time.Minute, 2 * time.Hour}[rng.IntN(3)]}
		cfg := pull.Config{Rotation: rot, Listing: changefeed.Listing{IndexSize: 1 + rng.IntN(3), PageSize: 2 + rng.IntN(3)}}
		if trial%2 == 1 {
			cfg.CacheBytes = -1
		}
		e := newEnv(t, cfg, "a", "b")
		var want, wantB []string
		at := t0
		n := 20 + rng.IntN(40)
		for i := range n {
			if rng.IntN(10) == 0 {
				at = at.Add(time.Duration(rng.IntN(90)) * time.Minute) // a gap
			}
			until := at.Add(time.Duration(1+rng.IntN(40)) * time.Minute)
			es := entries(at, until, rng.IntN(min(rot.MaxEntries+10, 40)), i)
			e.notify("a", at, until, es)
			for _, en := range es {
				want = append(want, entryKey(en))
			}
			if rng.IntN(4) == 0 { // another channel interleaved
				bs := entries(at, until, 2, 1000+i)
				e.notify("b", at, until, bs)
				for _, en := range bs {
					wantB = append(wantB, entryKey(en))
				}
			}
			at = until
			if i == n/2 {
				e.checkCrawl(t, "a", want, rot)
			}
		}
		e.checkCrawl(t, "a", want, rot)
		if len(wantB) > 0 {
			e.checkCrawl(t, "b", wantB, rot)
		}
	}
}

func (e *env) checkCrawl(t *testing.T, channel string, want []string, rot changefeed.Rotation) {
	t.Helper()
	c := e.crawl(channel)
	var got []string
	for _, en := range c.entries {
		got = append(got, entryKey(en))
	}
	if len(got) != len(want) {
		t.Fatalf("channel %s: client found %d entries in %d lists, notifications had %d", channel, len(got), len(c.lists), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("channel %s: entry %d is %q, want %q", channel, i, got[i], want[i])
		}
	}
	for _, l := range c.lists {
		if len(l.Entries) > rot.Normalized().MaxEntries && len(l.Entries) > 40 {
			t.Errorf("list from %s has %d entries, more than MaxEntries %d and than one notification", l.MD.From.Raw, len(l.Entries), rot.MaxEntries)
		}
	}
}

func TestPull_ListsRotateByCountAndSourceTime(t *testing.T) {
	e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 10, Period: time.Hour}}, "a")
	h := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	s1 := e.notify("a", h(0), h(10), entries(h(0), h(10), 6, 1))
	e.notify("a", h(10), h(20), entries(h(10), h(20), 4, 2))       // 10 entries: fits
	s3 := e.notify("a", h(20), h(30), entries(h(20), h(30), 1, 3)) // 11: closes by count
	s4 := e.notify("a", h(60), h(70), entries(h(60), h(70), 1, 4)) // gap, and a new hour
	e.notify("a", h(70), h(80), nil)                               // empty notification extends the open list
	c := e.crawl("a")
	want := []struct {
		url         string
		from, until time.Time
		n           int
	}{
		{wire.ChangeListFilePath("a", s1), h(0), h(20), 10},
		{wire.ChangeListFilePath("a", s3), h(20), h(30), 1},
		{wire.ChangeListFilePath("a", s4), h(60), time.Time{}, 1},
	}
	if len(c.lists) != len(want) {
		t.Fatalf("%d lists, want %d", len(c.lists), len(want))
	}
	for i, w := range want {
		l := c.lists[i]
		if !l.MD.From.Time.Equal(w.from) || !l.MD.Until.Time.Equal(w.until) || len(l.Entries) != w.n {
			t.Errorf("list %d: [%s, %s] %d entries; want [%s, %s] %d", i, l.MD.From.Raw, l.MD.Until.Raw, len(l.Entries), w.from, w.until, w.n)
		}
	}
	open, _ := e.doc(e.base + "/channels/a/changelist.xml")
	if !open.MD.From.Time.Equal(h(60)) || !open.MD.Until.IsZero() {
		t.Errorf("open list alias: from %s until %q", open.MD.From.Raw, open.MD.Until.Raw)
	}
	idx, _ := e.doc(e.base + "/channels/a/changelist-index.xml")
	if len(idx.Entries) != 3 || !strings.HasSuffix(idx.Entries[2].Loc, wire.ChangeListFilePath("a", s4)) || !idx.Entries[2].MD.Until.IsZero() {
		t.Errorf("index entries: %+v", idx.Entries)
	}
}

func TestPull_HTTPCachingCompressionAndDiscovery(t *testing.T) {
	e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 5}}, "a")
	s1 := e.notify("a", t0, t0.Add(time.Minute), entries(t0, t0.Add(time.Minute), 5, 1))
	e.notify("a", t0.Add(time.Minute), t0.Add(2*time.Minute), entries(t0.Add(time.Minute), t0.Add(2*time.Minute), 3, 2))
	capURL := e.base + "/channels/a/capabilitylist.xml"
	closedURL := e.base + wire.ChangeListFilePath("a", s1)
	docs := []struct {
		url, cache string
	}{
		{closedURL, "public, max-age=31536000, immutable"},
		{e.base + "/channels/a/changelist.xml", "public, max-age=5"},
		{e.base + "/channels/a/changelist-index.xml", "public, max-age=5"},
		{e.base + "/channels/a/changelist-archive.xml", "public, max-age=5"},
		{capURL, "public, max-age=5"},
	}
	for _, d := range docs {
		resp, body := e.get("GET", d.url)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", d.url, resp.Status)
		}
		h := resp.Header
		if h.Get("Cache-Control") != d.cache || h.Get("Content-Type") != "application/xml" || h.Get("Vary") != "Accept-Encoding" {
			t.Errorf("GET %s: Cache-Control %q Content-Type %q Vary %q", d.url, h.Get("Cache-Control"), h.Get("Content-Type"), h.Get("Vary"))
		}
		if want := "<" + capURL + `>; rel="resourcesync"`; !strings.HasPrefix(h.Get("Link"), want) {
			t.Errorf("GET %s: Link %q, want %q", d.url, h.Get("Link"), want)
		}
		etag, lm := h.Get("ETag"), h.Get("Last-Modified")
		if etag == "" || lm == "" {
			t.Fatalf("GET %s: ETag %q Last-Modified %q", d.url, etag, lm)
		}
		if r, b := e.get("GET", d.url, "If-None-Match", etag); r.StatusCode != http.StatusNotModified || len(b) != 0 || r.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match: %s, %d bytes", r.Status, len(b))
		}
		if r, _ := e.get("GET", d.url, "If-None-Match", `"other", `+etag); r.StatusCode != http.StatusNotModified {
			t.Errorf("If-None-Match list: %s", r.Status)
		}
		if r, _ := e.get("GET", d.url, "If-Modified-Since", lm); r.StatusCode != http.StatusNotModified {
			t.Errorf("If-Modified-Since: %s", r.Status)
		}
		if r, _ := e.get("GET", d.url, "If-None-Match", `"other"`, "If-Modified-Since", lm); r.StatusCode != 200 {
			t.Errorf("If-None-Match takes precedence over If-Modified-Since: %s", r.Status)
		}
		gr, gbody := e.get("GET", d.url, "Accept-Encoding", "gzip, deflate")
		if gr.Header.Get("Content-Encoding") != "gzip" || string(gbody) != string(body) {
			t.Errorf("gzip: Content-Encoding %q, same body %v", gr.Header.Get("Content-Encoding"), string(gbody) == string(body))
		}
		if gr.Header.Get("ETag") == etag {
			t.Errorf("gzip and identity share ETag %s", etag)
		}
		if r, _ := e.get("GET", d.url, "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
			t.Errorf("gzip;q=0 got Content-Encoding %q", r.Header.Get("Content-Encoding"))
		}
		hr, hb := e.get("HEAD", d.url)
		if hr.StatusCode != 200 || len(hb) != 0 || hr.Header.Get("ETag") != etag {
			t.Errorf("HEAD: %s, %d bytes, ETag %q", hr.Status, len(hb), hr.Header.Get("ETag"))
		}
	}
	// the open list changes: its old ETag no longer matches
	_, _ = e.get("GET", e.base+"/channels/a/changelist.xml")
	r0, _ := e.get("GET", e.base+"/channels/a/changelist.xml")
	e.notify("a", t0.Add(2*time.Minute), t0.Add(3*time.Minute), entries(t0.Add(2*time.Minute), t0.Add(3*time.Minute), 1, 3))
	if r, _ := e.get("GET", e.base+"/channels/a/changelist.xml", "If-None-Match", r0.Header.Get("ETag")); r.StatusCode != 200 {
		t.Errorf("open list after an append: %s, want 200", r.Status)
	}
	for _, path := range []string{"/channels/nope/capabilitylist.xml", wire.ChangeListFilePath("a", 999), "/channels/a/changelist/01.xml", wire.ChangeListArchivePagePath("a", 9)} {
		if r, _ := e.get("GET", e.base+path); r.StatusCode != 404 {
			t.Errorf("GET %s: %s, want 404", path, r.Status)
		}
	}
}

func TestPull_LegacyListNamesRedirectToZeroPadded(t *testing.T) {
	e := newEnv(t, pull.Config{}, "a")
	for path, want := range map[string]string{
		"/channels/a/changelist/999.xml":       wire.ListFile(999),
		"/channels/a/changelist-archive/9.xml": wire.ListFile(9),
	} {
		r, _ := e.get("GET", e.base+path)
		if r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != want {
			t.Errorf("GET %s: %s Location %q, want 301 %q", path, r.Status, r.Header.Get("Location"), want)
		}
	}
}

func TestPull_RetentionDropsListsWhoseRecordsAreGone(t *testing.T) {
	e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 2}}, "a")
	var seqs []uint64
	for i := range 5 {
		from := t0.Add(time.Duration(i) * time.Minute)
		seqs = append(seqs, e.notify("a", from, from.Add(time.Minute), entries(from, from.Add(time.Minute), 2, i)))
	}
	before := e.crawl("a")
	if len(before.lists) != 5 {
		t.Fatalf("%d lists before retention, want 5", len(before.lists))
	}
	js, err := jetstream.New(e.nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), jslogStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(context.Background(), jetstream.WithPurgeSequence(seqs[2])); err != nil { // removes the first two
		t.Fatal(err)
	}
	// a gone closed list answers 404 at once, found while reading the log
	// lists stop being served, and listed, once the log's bounds are read
	// again (jslog caches them for jslog.BoundsCacheTTL)
	testenv.Eventually(t, 5*time.Second, func() bool {
		r, _ := e.get("GET", e.base+wire.ChangeListFilePath("a", seqs[0]))
		return r.StatusCode == 404
	}, "a removed list answers 404")
	testenv.Eventually(t, 5*time.Second, func() bool {
		a, _ := e.doc(e.base + "/channels/a/changelist-archive.xml")
		return len(a.Entries) == 2
	}, "archive drops removed lists")
	after := e.crawl("a")
	if len(after.lists) != 3 || after.lists[0].MD.From.Time != before.lists[2].MD.From.Time {
		t.Fatalf("after retention %d lists from %s, want 3 from %s", len(after.lists), after.lists[0].MD.From.Raw, before.lists[2].MD.From.Raw)
	}
	for _, u := range after.urls {
		if r, _ := e.get("HEAD", u); r.StatusCode != 200 {
			t.Errorf("document links to %s which answers %s", u, r.Status)
		}
	}
}

const jslogStream = "RSHUB"

func TestPull_SourceDescriptionAndCapabilityListBeforeAnyNotification(t *testing.T) {
	e := newEnv(t, pull.Config{}, "a", "b")
	sd, _ := e.doc(e.base + "/.well-known/resourcesync")
	if len(sd.Entries) != 2 {
		t.Fatalf("Source Description lists %d Capability Lists, want 2", len(sd.Entries))
	}
	cl, _ := e.doc(e.base + "/channels/a/capabilitylist.xml")
	if len(cl.Entries) != 1 || cl.Entries[0].MD.Capability != changefeed.CapChangeNotification {
		t.Errorf("Capability List of a channel without notifications: %+v", cl.Entries)
	}
	for _, p := range []string{"changelist.xml", "changelist-index.xml", "changelist-archive.xml"} {
		if r, _ := e.get("GET", e.base+"/channels/a/"+p); r.StatusCode != 404 {
			t.Errorf("%s before any notification: %s", p, r.Status)
		}
	}
	e.notify("a", t0, t0.Add(time.Minute), entries(t0, t0.Add(time.Minute), 1, 0))
	cl, _ = e.doc(e.base + "/channels/a/capabilitylist.xml")
	if len(cl.Entries) != 2 || !strings.HasSuffix(cl.Entries[0].Loc, "/channels/a/changelist.xml") {
		t.Errorf("Capability List with one open list: %+v", cl.Entries)
	}
}
