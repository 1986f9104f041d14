package pull_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	gofeed "github.com/mmcdole/gofeed/atom"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/atom"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/wire"
)

// feedDoc is one feed document the hub served, parsed twice: by gofeed (a
// well-kept Atom parser) and by client/atom.
type feedDoc struct {
	url  string
	resp *http.Response
	g    *gofeed.Feed
	f    *atom.Feed
}

// feedChain fetches the subscription document of channel and every archive
// by prev-archive, newest first, and checks RFC 4287's required elements
// and the Atom-PMH profile's rules on each document and between them.
func (e *env) feedChain(channel string) []feedDoc {
	e.t.Helper()
	sub := e.base + wire.FeedPath(channel)
	var docs []feedDoc
	for u := sub; u != ""; {
		resp, body := e.get("GET", u)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wire.MediaTypeAtom || resp.Header.Get("ETag") == "" {
			e.t.Fatalf("GET %s: %s, Content-Type %q, ETag %q: %s", u, resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("ETag"), clip(body))
		}
		g, err := (&gofeed.Parser{}).Parse(bytes.NewReader(body))
		if err != nil {
			e.t.Fatalf("gofeed: %s: %v", u, err)
		}
		f, err := atom.Parse(bytes.NewReader(body))
		if err != nil {
			e.t.Fatalf("%s: %v", u, err)
		}
		docs = append(docs, feedDoc{url: u, resp: resp, g: g, f: f})
		u = f.Link(wire.RelPrevArchive)
		if len(docs) > 1000 {
			e.t.Fatal("prev-archive chain does not end")
		}
	}
	for i, d := range docs {
		checkFeedDoc(e.t, d, sub, i == 0)
		switch {
		case i == 0 && len(docs) > 1 && d.f.Link(wire.RelPrevArchive) == "":
			e.t.Fatalf("subscription document with archives has no prev-archive")
		case i > 0 && d.f.Link(wire.RelNextArchive) != map[bool]string{true: "", false: docs[max(i-1, 0)].url}[i == 1]:
			e.t.Fatalf("archive %s: next-archive %q", d.url, d.f.Link(wire.RelNextArchive))
		}
		if i > 0 { // the referee is not newer than any entry of its referrer
			for _, en := range docs[i-1].f.Entries {
				if d.f.Updated.After(en.Updated) {
					e.t.Fatalf("archive %s updated %s after entry %s (%s) of %s", d.url, d.f.Updated, en.ID, en.Updated, docs[i-1].url)
				}
			}
		}
	}
	return docs
}

// checkFeedDoc checks one document: RFC 4287 §4.1.1 (atom:id, atom:title,
// atom:updated, an author) and §4.1.2 (id, title, updated per entry), and
// the profile (active entries: an alternate link, no content; deletion
// entries: no alternate, empty content without src; archives: fh:archive
// and current).
func checkFeedDoc(t testing.TB, d feedDoc, sub string, isSub bool) {
	t.Helper()
	g := d.g
	if g.ID != sub || g.Title == "" || g.UpdatedParsed == nil || len(g.Authors) == 0 {
		t.Fatalf("%s: id %q, title %q, updated %q, authors %d", d.url, g.ID, g.Title, g.Updated, len(g.Authors))
	}
	if d.f.Link(wire.RelCurrent) != sub || d.f.Link(wire.RelSelf) != d.url || d.f.Archive == isSub {
		t.Fatalf("%s: current %q, self %q, fh:archive %v", d.url, d.f.Link(wire.RelCurrent), d.f.Link(wire.RelSelf), d.f.Archive)
	}
	if isSub && (d.f.Link(wire.RelHub) != hubURL || !strings.Contains(d.resp.Header.Get("Link"), `rel="hub"`)) {
		t.Fatalf("%s: subscription document without hub link", d.url)
	}
	for i, en := range g.Entries {
		if en.ID == "" || en.Title == "" || en.UpdatedParsed == nil {
			t.Fatalf("%s: entry %d lacks id, title or updated", d.url, i)
		}
		if en.UpdatedParsed.After(*g.UpdatedParsed) {
			t.Fatalf("%s: entry %s updated %s after the feed's %s", d.url, en.ID, en.Updated, g.Updated)
		}
		if i > 0 && en.UpdatedParsed.After(*g.Entries[i-1].UpdatedParsed) {
			t.Fatalf("%s: entries not newest first at %d", d.url, i)
		}
		alts := 0
		for _, l := range en.Links {
			if l.Rel == "" || l.Rel == "alternate" {
				alts++
			}
		}
		ours := d.f.Entries[i]
		switch {
		case ours.Change == string(changefeed.Deleted):
			if alts != 0 || en.Content == nil || en.Content.Src != "" || en.Content.Value != "" || !ours.IsDeletion() {
				t.Fatalf("%s: deletion entry %s malformed: %d alternates, content %+v", d.url, en.ID, alts, en.Content)
			}
		case alts == 0 || en.Content != nil:
			t.Fatalf("%s: active entry %s: %d alternates, content %+v", d.url, en.ID, alts, en.Content)
		}
		if _, ok := en.Extensions["rs"]["md"]; !ok {
			t.Fatalf("%s: entry %s without rs:md", d.url, en.ID)
		}
	}
}

// history appends n random notifications over a pool of resources to
// channel "a" and returns the Source's final state: loc to its last
// change.
func (e *env) history(rng *rand.Rand, n, pool int, at time.Time) (map[string]changefeed.Change, time.Time) {
	state := map[string]changefeed.Change{}
	for range n {
		until := at.Add(time.Minute)
		k := 1 + rng.IntN(6)
		es := make([]changefeed.Entry, 0, k)
		for j := range k {
			loc := fmt.Sprintf("http://example.com/r/%d", rng.IntN(pool))
			c := changefeed.Updated
			switch last, ok := state[loc]; {
			case !ok || last == changefeed.Deleted:
				c = changefeed.Created
			case rng.IntN(4) == 0:
				c = changefeed.Deleted
			}
			state[loc] = c
			en := changefeed.Entry{Loc: loc, MD: &changefeed.MD{Change: c, Length: -1,
				DateTime: changefeed.NewDateTime(at.Add(time.Duration(j) * time.Second))}}
			if c != changefeed.Deleted && rng.IntN(2) == 0 {
				en.MD.Hash, en.MD.Length, en.MD.Type = "md5:1e0d5cb8ef6ba40c99b14c0237be735e", int64(rng.IntN(999)), "text/plain"
			}
			es = append(es, en)
		}
		e.notify("a", at, until, es)
		at = until
	}
	return state, at
}

// live returns the resources whose last change is not a deletion.
func live(state map[string]changefeed.Change) []string {
	var out []string
	for loc, c := range state {
		if c != changefeed.Deleted {
			out = append(out, loc)
		}
	}
	slices.Sort(out)
	return out
}

type memStore map[string]bool

func (m memStore) Put(_ context.Context, id string, _ *atom.Entry) error { m[id] = true; return nil }
func (m memStore) Delete(_ context.Context, id string) error             { delete(m, id); return nil }

func (m memStore) ids() []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// TestFeed_HarvesterMirrorEqualsChangeListCrawlAndSource: for random
// histories with rotations, harvested incrementally at random points, the
// harvester's mirror equals the Source's state and the net state of the
// Change Lists a crawler reads; every feed document meets the profile,
// and the newest entry of each resource across the logical feed is active
// exactly for live resources.
func TestFeed_HarvesterMirrorEqualsChangeListCrawlAndSource(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 14))
			e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 5 + rng.IntN(20)}}, "a")
			h, err := atom.New(atom.Config{Feed: e.base + wire.FeedPath("a")}, atom.State{})
			if err != nil {
				t.Fatal(err)
			}
			store := memStore{}
			state := map[string]changefeed.Change{}
			at := t0
			for round := range 4 {
				var s map[string]changefeed.Change
				s, at = e.history(rng, 5+rng.IntN(15), 12, at)
				for k, v := range s {
					state[k] = v
				}
				if _, err := h.Harvest(context.Background(), store); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if got, want := store.ids(), live(state); !slices.Equal(got, want) {
					t.Fatalf("round %d: harvested %v\nSource %v", round, got, want)
				}
			}
			crawl := map[string]changefeed.Change{}
			for _, en := range e.crawl("a").entries {
				crawl[en.Loc] = en.MD.Change
			}
			if got, want := live(crawl), store.ids(); !slices.Equal(got, want) {
				t.Fatalf("Change-List crawl %v\nharvest %v", got, want)
			}
			docs := e.feedChain("a")
			if len(docs) < 2 {
				t.Fatalf("no archive after rotations: %d documents", len(docs))
			}
			newest := map[string]*atom.Entry{}
			for _, d := range docs {
				for i := range d.f.Entries {
					en := &d.f.Entries[i]
					if n := newest[en.ID]; n == nil || en.Updated.After(n.Updated) {
						newest[en.ID] = en
					}
				}
			}
			var active []string
			for id, en := range newest {
				if !en.IsDeletion() {
					active = append(active, id)
				}
			}
			slices.Sort(active)
			if want := live(state); !slices.Equal(active, want) {
				t.Fatalf("active entries %v\nlive resources %v", active, want)
			}
		})
	}
}

// TestFeed_ArchivesCacheLikeClosedLists: an archive with a newer one is
// immutable; ETag and If-None-Match give 304; gzip is served; the
// capability documents and the hosted feed's Link header advertise it.
func TestFeed_ArchivesCacheLikeClosedLists(t *testing.T) {
	e := newEnv(t, pull.Config{Rotation: changefeed.Rotation{MaxEntries: 3}}, "a")
	e.history(rand.New(rand.NewPCG(1, 2)), 12, 6, t0)
	docs := e.feedChain("a")
	if len(docs) < 3 {
		t.Fatalf("%d documents", len(docs))
	}
	old, newest := docs[len(docs)-1], docs[1]
	if cc := old.resp.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("oldest archive Cache-Control %q", cc)
	}
	if cc := newest.resp.Header.Get("Cache-Control"); strings.Contains(cc, "immutable") {
		t.Errorf("newest archive (no next-archive yet) Cache-Control %q", cc)
	}
	for _, d := range []feedDoc{docs[0], old} {
		resp, _ := e.get("GET", d.url, "If-None-Match", d.resp.Header.Get("ETag"))
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s conditional GET: %s", d.url, resp.Status)
		}
		resp, body := e.get("GET", d.url, "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.HasPrefix(body, []byte("<?xml")) {
			t.Errorf("%s gzip: %q", d.url, resp.Header.Get("Content-Encoding"))
		}
	}
	feed := e.base + wire.FeedPath("a")
	want := `<rs:ln rel="alternate" href="` + feed + `" type="application/atom+xml"/>`
	for _, u := range []string{e.base + wire.CapabilityListPath("a"), e.base + wire.PathWellKnown} {
		if _, body := e.get("GET", u); !bytes.Contains(body, []byte(want)) {
			t.Errorf("%s does not advertise the feed:\n%s", u, body)
		}
	}
	if got := wire.FeedLink(e.base + wire.CapabilityListPath("a")); got != "<"+feed+`>; rel="alternate"; type="application/atom+xml"` {
		t.Errorf("FeedLink %q", got)
	}
	if resp, _ := e.get("GET", e.base+wire.FeedArchivePath("a", 999999)); resp.StatusCode != 404 {
		t.Errorf("unknown archive: %s", resp.Status)
	}
}
