package pull_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/wire"
)

const describedBy = "http://example.com/a/dataset-description.xml"

// newDatasetEnv serves channel a with a dataset description and channel b
// without one (but with the Source's own Capability List known, which the
// Source Description must not take for a description).
func newDatasetEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 5}}, func(l pull.RangeLog, _ pull.ChannelLister) (pull.RangeLog, pull.ChannelLister) {
		return l, channels{
			{Name: "a", Topic: "http://example.com/a/change/", Created: t0, DescribedBy: describedBy},
			{Name: "b", Topic: "http://example.com/b/change/", Created: t0, CapabilityList: "http://example.com/b/capabilitylist.xml"},
		}
	})
}

// golden replaces the test server's random base URL with a fixed one.
func (e *env) golden(body []byte) string {
	return strings.ReplaceAll(string(body), e.base, "http://hub.test")
}

func TestPull_SourceDescriptionDescribedByIsTheDatasetDescription(t *testing.T) {
	e := newDatasetEnv(t)
	e.doc(e.base + wire.PathWellKnown) // strictly valid
	_, body := e.get("GET", e.base+wire.PathWellKnown)
	want := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="description"/>
<url><loc>http://hub.test/channels/a/capabilitylist.xml</loc><rs:md capability="capabilitylist"/><rs:ln rel="describedby" href="http://example.com/a/dataset-description.xml"/><rs:ln rel="alternate" href="http://hub.test/channels/a/feed.atom" type="application/atom+xml"/></url>
<url><loc>http://hub.test/channels/b/capabilitylist.xml</loc><rs:md capability="capabilitylist"/><rs:ln rel="alternate" href="http://hub.test/channels/b/feed.atom" type="application/atom+xml"/></url>
</urlset>`
	if got := e.golden(body); strings.TrimSpace(got) != want {
		t.Errorf("Source Description:\n%s\nwant\n%s", got, want)
	}
}

func TestPull_CapabilityListRootLinksTheDatasetDescription(t *testing.T) {
	e := newDatasetEnv(t)
	e.notify("a", t0, t0.Add(time.Minute), entries(t0, t0.Add(time.Minute), 2, 1))
	for _, tt := range []struct{ name, want string }{
		{"a", describedBy},
		{"b", ""},
	} {
		d, _ := e.doc(e.base + wire.CapabilityListPath(tt.name))
		if got := d.Link("describedby"); got != tt.want {
			t.Errorf("channel %s: Capability List describedby %q, want %q", tt.name, got, tt.want)
		}
		if got := d.Link("up"); got != e.base+wire.PathWellKnown {
			t.Errorf("channel %s: Capability List up %q", tt.name, got)
		}
	}
	_, body := e.get("GET", e.base+wire.CapabilityListPath("a"))
	want := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:ln rel="up" href="http://hub.test/.well-known/resourcesync"/>
<rs:ln rel="describedby" href="http://example.com/a/dataset-description.xml"/>
<rs:ln rel="alternate" href="http://hub.test/channels/a/feed.atom" type="application/atom+xml"/>
<rs:md capability="capabilitylist"/>
<url><loc>http://hub.test/channels/a/changelist.xml</loc><rs:md capability="changelist"/></url>
<url><loc>http://example.com/a/change/</loc><rs:md capability="change-notification"/><rs:ln rel="hub" href="http://127.0.0.1:1/websub"/></url>
</urlset>`
	if got := e.golden(body); strings.TrimSpace(got) != want {
		t.Errorf("Capability List:\n%s\nwant\n%s", got, want)
	}
}

// TestPull_LinkHeadersOnEveryDocument: every channel document names its
// Capability List (resourcesync), its parent (up, as its rs:ln rel="up")
// and the dataset description when the channel has one.
func TestPull_LinkHeadersOnEveryDocument(t *testing.T) {
	e := newDatasetEnv(t)
	s1 := e.notify("a", t0, t0.Add(time.Minute), entries(t0, t0.Add(time.Minute), 5, 1))
	e.notify("a", t0.Add(time.Minute), t0.Add(2*time.Minute), entries(t0.Add(time.Minute), t0.Add(2*time.Minute), 3, 2))
	e.notify("b", t0, t0.Add(time.Minute), entries(t0, t0.Add(time.Minute), 2, 3))
	sd := e.base + wire.PathWellKnown
	capA, capB := e.base+wire.CapabilityListPath("a"), e.base+wire.CapabilityListPath("b")
	tests := []struct {
		url, up, describedBy string
	}{
		{capA, sd, describedBy},
		{e.base + wire.ChangeListPath("a"), capA, describedBy},
		{e.base + wire.ChangeListFilePath("a", s1), capA, describedBy},
		{e.base + wire.ChangeListIndexPath("a"), capA, describedBy},
		{e.base + wire.ChangeListArchivePath("a"), capA, describedBy},
		{capB, sd, ""},
		{e.base + wire.ChangeListPath("b"), capB, ""},
	}
	for _, tt := range tests {
		d, resp := e.doc(tt.url)
		links := wire.ParseLinks(resp.Header.Values("Link"))
		capURL := capA
		if strings.Contains(tt.url, "/b/") {
			capURL = capB
		}
		if got := wire.FirstLink(links, wire.RelResourceSync); got != capURL {
			t.Errorf("GET %s: Link rel=resourcesync %q, want %q", tt.url, got, capURL)
		}
		if got := wire.FirstLink(links, wire.RelUp); got != tt.up || d.Link("up") != tt.up {
			t.Errorf("GET %s: Link rel=up %q, rs:ln up %q, want %q", tt.url, got, d.Link("up"), tt.up)
		}
		if got := wire.FirstLink(links, wire.RelDescribedBy); got != tt.describedBy {
			t.Errorf("GET %s: Link rel=describedby %q, want %q", tt.url, got, tt.describedBy)
		}
	}
}

func TestPull_RobotsTxtNamesEverySitemap(t *testing.T) {
	e := newDatasetEnv(t)
	resp, body := e.get("GET", e.base+wire.PathRobots)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("ETag") == "" {
		t.Fatalf("GET robots.txt: %s, Content-Type %q, ETag %q", resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("ETag"))
	}
	want := `# rshub: ResourceSync documents (Source Description, one Capability List per channel)
User-agent: *
Disallow:

Sitemap: http://hub.test/.well-known/resourcesync
Sitemap: http://hub.test/channels/a/capabilitylist.xml
Sitemap: http://hub.test/channels/b/capabilitylist.xml
`
	if got := e.golden(body); got != want {
		t.Errorf("robots.txt:\n%s\nwant\n%s", got, want)
	}
	// every Sitemap it names is a strictly valid ResourceSync document
	for _, line := range strings.Split(string(body), "\n") {
		if u, ok := strings.CutPrefix(line, "Sitemap: "); ok {
			e.doc(u)
		}
	}
	if r, _ := e.get("GET", e.base+wire.PathRobots, "If-None-Match", resp.Header.Get("ETag")); r.StatusCode != 304 {
		t.Errorf("conditional GET of robots.txt: %s, want 304", r.Status)
	}
}

// mutableChannels is a ChannelLister whose channels a test changes.
type mutableChannels struct {
	mu    sync.Mutex
	chans []hub.Channel
}

func (m *mutableChannels) Channels(context.Context) ([]hub.Channel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]hub.Channel(nil), m.chans...), nil
}

func (m *mutableChannels) setDescribedBy(v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chans[0].DescribedBy = v
}

// TestPull_DescribedByChangesTheETag: a channel given a description later
// serves a new Capability List and Source Description, not a 304 of the
// old ones.
func TestPull_DescribedByChangesTheETag(t *testing.T) {
	chans := &mutableChannels{chans: []hub.Channel{{Name: "a", Topic: "http://example.com/a/change/", Created: t0}}}
	e := newEnvWith(t, pull.Config{}, func(l pull.RangeLog, _ pull.ChannelLister) (pull.RangeLog, pull.ChannelLister) {
		return l, chans
	})
	for _, u := range []string{e.base + wire.CapabilityListPath("a"), e.base + wire.PathWellKnown} {
		r0, _ := e.get("GET", u)
		chans.setDescribedBy(describedBy)
		time.Sleep(pull.ChannelsTTL + 100*time.Millisecond)
		if r, _ := e.get("GET", u, "If-None-Match", r0.Header.Get("ETag")); r.StatusCode != 200 {
			t.Errorf("GET %s after describedBy was set: %s, want 200", u, r.Status)
		}
		chans.setDescribedBy("")
		time.Sleep(pull.ChannelsTTL + 100*time.Millisecond)
	}
}
