package pull_test

import (
	"slices"
	"strings"

	"github.com/rshub/rshub/changefeed"
)

// crawled is what a ResourceSync client finds for one channel by following
// links from the Source Description.
type crawled struct {
	lists   []*changefeed.Document // archived closed lists, then the index's newer ones, open last
	urls    []string               // every document fetched
	entries []changefeed.Entry     // entries of lists, in order
}

// crawl follows the documents from /.well-known/resourcesync like a client:
// Capability List, then the archive (and its pages) for every closed list,
// then the index (or the open list) for the lists not archived, checking the
// structural links on the way. Every document must validate strictly.
func (e *env) crawl(channel string) crawled {
	e.t.Helper()
	var c crawled
	fetch := func(u string) *changefeed.Document {
		d, _ := e.doc(u)
		c.urls = append(c.urls, u)
		return d
	}
	sdURL := e.base + "/.well-known/resourcesync"
	sd := fetch(sdURL)
	if sd.MD.Capability != changefeed.CapDescription {
		e.t.Fatalf("Source Description capability %q", sd.MD.Capability)
	}
	capURL := ""
	for _, en := range sd.Entries {
		if strings.HasSuffix(en.Loc, "/channels/"+channel+"/capabilitylist.xml") {
			capURL = en.Loc
		}
	}
	if capURL == "" {
		e.t.Fatalf("Source Description does not list channel %s", channel)
	}
	cl := fetch(capURL)
	if cl.MD.Capability != changefeed.CapCapabilityList || cl.Link("up") != sdURL {
		e.t.Fatalf("Capability List: capability %q, up %q", cl.MD.Capability, cl.Link("up"))
	}
	caps := map[changefeed.Capability]changefeed.Entry{}
	for _, en := range cl.Entries {
		if _, dup := caps[en.MD.Capability]; dup {
			e.t.Fatalf("Capability List has two %s entries", en.MD.Capability)
		}
		caps[en.MD.Capability] = en
	}
	cn, ok := caps[changefeed.CapChangeNotification]
	if !ok || !strings.HasSuffix(cn.Loc, "/"+channel+"/change/") || len(cn.Links) != 1 || cn.Links[0].Rel != "hub" || cn.Links[0].Href != hubURL {
		e.t.Fatalf("Capability List change-notification entry: %+v", cn)
	}
	var listURLs []string
	if a, ok := caps[changefeed.CapChangeListArchive]; ok {
		ad := fetch(a.Loc)
		if ad.MD.Capability != changefeed.CapChangeListArchive || ad.Link("up") != capURL {
			e.t.Fatalf("archive: capability %q, up %q", ad.MD.Capability, ad.Link("up"))
		}
		pages := []*changefeed.Document{ad}
		if ad.Kind == changefeed.SitemapIndex {
			pages = pages[:0]
			for _, pe := range ad.Entries {
				pd := fetch(pe.Loc)
				if pd.Kind != changefeed.URLSet || pd.MD.Capability != changefeed.CapChangeListArchive || pd.Link("index") != a.Loc {
					e.t.Fatalf("archive page %s: kind %d, capability %q, index %q", pe.Loc, pd.Kind, pd.MD.Capability, pd.Link("index"))
				}
				pages = append(pages, pd)
			}
		}
		for _, pd := range pages {
			for _, le := range pd.Entries {
				if le.MD == nil || le.MD.From.IsZero() || le.MD.Until.IsZero() {
					e.t.Fatalf("archive entry %s without from and until", le.Loc)
				}
				listURLs = append(listURLs, le.Loc)
			}
		}
	}
	if ce, ok := caps[changefeed.CapChangeList]; ok {
		d := fetch(ce.Loc)
		if d.Kind == changefeed.SitemapIndex {
			if d.MD.Capability != changefeed.CapChangeList || d.Link("up") != capURL || d.MD.From.IsZero() {
				e.t.Fatalf("index: capability %q, up %q, from %q", d.MD.Capability, d.Link("up"), d.MD.From.Raw)
			}
			for _, le := range d.Entries {
				if !slices.Contains(listURLs, le.Loc) {
					listURLs = append(listURLs, le.Loc)
				}
			}
		} else if !slices.Contains(listURLs, ce.Loc) {
			listURLs = append(listURLs, ce.Loc)
		}
	}
	for i, u := range listURLs {
		d := fetch(u)
		if d.Kind != changefeed.URLSet || d.MD.Capability != changefeed.CapChangeList || d.Link("up") != capURL || d.MD.From.IsZero() {
			e.t.Fatalf("list %s: kind %d capability %q up %q from %q", u, d.Kind, d.MD.Capability, d.Link("up"), d.MD.From.Raw)
		}
		if last := i == len(listURLs)-1; d.MD.Until.IsZero() != last {
			e.t.Fatalf("list %s (%d of %d): until %q; only the last list is open", u, i+1, len(listURLs), d.MD.Until.Raw)
		}
		if !d.MD.Until.IsZero() && (d.Link("index") == "" || d.Link("archives") == "") {
			e.t.Fatalf("closed list %s lacks rel=index or rel=archives", u)
		}
		if i > 0 {
			prev := c.lists[i-1]
			if d.MD.From.Time.Before(prev.MD.Until.Time) {
				e.t.Fatalf("list %s from %s before the previous until %s", u, d.MD.From.Raw, prev.MD.Until.Raw)
			}
		}
		for _, en := range d.Entries {
			if en.LastMod.IsZero() {
				e.t.Fatalf("list %s: entry %s without lastmod", u, en.Loc)
			}
		}
		c.lists = append(c.lists, d)
		c.entries = append(c.entries, d.Entries...)
	}
	return c
}
