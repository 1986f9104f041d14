package delivery

import (
	"bytes"
	"strings"
	"testing"
	"time"

	gofeed "github.com/mmcdole/gofeed/atom"

	"github.com/rshub/rshub/wire"
)

const atomNotification = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-01T00:01:00Z"/>
<url><loc>http://example.com/a</loc><rs:md change="created" datetime="2026-01-01T00:00:10Z" hash="md5:1e0d5cb8ef6ba40c99b14c0237be735e" length="8" type="text/plain"/></url>
<url><loc>http://example.com/b</loc><rs:md change="deleted" datetime="2026-01-01T00:00:20Z"/></url>
</urlset>`

// A change notification becomes an Atom document of its entries, newest
// first, with the feed URL as self and id and the hub; other content is
// skipped.
func TestAtomRecord(t *testing.T) {
	t.Parallel()
	w := &Webhooks{cfg: Config{HubURL: "http://hub.example/"}}
	feed := "http://hub.example/channels/c/feed.atom"
	until := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	rec := wire.Record{Seq: 7, Channel: "c", Topic: "http://src.example/c/", ContentType: "application/xml", Body: []byte(atomNotification), Until: until, ResourceSync: "http://src.example/cl.xml"}
	out, ok, err := w.atomRecord(rec, feed)
	if err != nil || !ok {
		t.Fatalf("atomRecord: %v %v", ok, err)
	}
	if out.ContentType != wire.MediaTypeAtom || out.Topic != feed || out.ResourceSync != "" || out.Seq != 7 {
		t.Fatalf("record %+v", out)
	}
	if l := w.linkHeader(out); !strings.Contains(l, "<"+feed+`>; rel="self"`) || !strings.Contains(l, `<http://hub.example/>; rel="hub"`) {
		t.Fatalf("Link %s", l)
	}
	g, err := (&gofeed.Parser{}).Parse(bytes.NewReader(out.Body))
	if err != nil {
		t.Fatal(err)
	}
	if g.ID != feed || len(g.Entries) != 2 || g.Entries[0].ID != "http://example.com/b" || g.Entries[1].ID != "http://example.com/a" {
		t.Fatalf("feed %+v", g)
	}
	del, act := g.Entries[0], g.Entries[1]
	if len(del.Links) != 0 || del.Content == nil || del.Content.Src != "" || del.Updated != "2026-01-01T00:00:20Z" {
		t.Fatalf("deletion entry %+v", del)
	}
	if len(act.Links) != 1 || act.Links[0].Rel != "alternate" || act.Links[0].Href != "http://example.com/a" || act.Links[0].Type != "text/plain" {
		t.Fatalf("active entry %+v", act)
	}
	if !bytes.Contains(out.Body, []byte(`hash="md5:1e0d5cb8ef6ba40c99b14c0237be735e"`)) || !bytes.Contains(out.Body, []byte(`length="8"`)) {
		t.Fatalf("rs:md lost: %s", out.Body)
	}
	for _, other := range []wire.Record{
		{Seq: 8, ContentType: "application/json", Body: []byte(`{}`)},
		{Seq: 9, ContentType: "application/xml", Body: []byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist"/></urlset>`)},
		{Seq: 10, ContentType: "application/xml", Body: []byte(`not xml`)},
	} {
		if _, ok, err := w.atomRecord(other, feed); ok || err != nil {
			t.Errorf("record %d: rendered %v, %v", other.Seq, ok, err)
		}
	}
}
