package follow

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/follow/rldiff"
)

func resourceList(at string, entries ...string) string {
	var b strings.Builder
	b.WriteString(rsHead + `<rs:md capability="resourcelist" at="` + at + `"/>`)
	for _, e := range entries {
		loc, mod, _ := strings.Cut(e, "@")
		b.WriteString(`<url><loc>http://s.example/` + loc + `</loc><lastmod>` + mod + `</lastmod></url>`)
	}
	return b.String() + `</urlset>`
}

func resourceListIndex(base, at string, maps ...string) string {
	var b strings.Builder
	b.WriteString(idxHead + `<rs:md capability="resourcelist" at="` + at + `"/>`)
	for _, m := range maps {
		b.WriteString(`<sitemap><loc>` + base + m + `</loc></sitemap>`)
	}
	return b.String() + `</sitemapindex>`
}

// A Source with a Resource List and no Change List: successive lists are
// diffed into created, updated and deleted notifications, contiguous from
// the previous list's time; an unchanged list costs a 304.
func TestFollower_AResourceListOnlySourceIsDiffed(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/rl.xml", "resourcelist"}))
	r.src.set("/rl.xml", resourceList(t1, "a@"+t0, "b@"+t0, "c@"+t0))
	f := r.followerOf("/cap.xml")
	r.poll(t, f)
	if got := r.hub.published(); got != "" {
		t.Fatalf("baseline published %q", got)
	}
	r.src.set("/rl.xml", resourceList(t2, "a@"+t0, "b@"+t2, "d@"+t2))
	r.poll(t, f)
	r.poll(t, f)
	if got := r.hub.published(); got != "b c d" { // in loc order
		t.Fatalf("published %q, want b (updated) c (deleted) d (created)", got)
	}
	if f.fetch.notModified != 1 || r.hub.anchor.Format("15:04:05") != "00:00:02" || len(r.hub.gaps) != 0 {
		t.Errorf("304s %d, anchor %s, gaps %v", f.fetch.notModified, r.hub.anchor, r.hub.gaps)
	}
	// a Resource List Index over sitemaps; a follower that starts again
	// takes a new baseline, and what changed before it is a gap
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/rli.xml", "resourcelist"}))
	r.src.set("/rli.xml", resourceListIndex(r.srv.URL, t3, "/m1.xml", "/m2.xml"))
	r.src.set("/m1.xml", resourceList(t3, "a@"+t0, "b@"+t2))
	r.src.set("/m2.xml", resourceList(t3, "d@"+t2, "e@"+t3))
	g := r.followerOf("/cap.xml")
	r.poll(t, g)
	r.src.set("/m2.xml", resourceList(t4, "e@"+t4))
	r.src.set("/rli.xml", resourceListIndex(r.srv.URL, t4, "/m1.xml", "/m2.xml"))
	r.poll(t, g)
	if got := r.hub.published(); got != "b c d d e" || len(r.hub.gaps) != 1 || g.status().Resources != 3 {
		t.Fatalf("published %q, gaps %v, resources %d; want d (deleted) e (updated) after a gap", got, r.hub.gaps, g.status().Resources)
	}
}

// A Resource List Index naming more sitemaps than the hub reads is refused
// with an error that says so, before any sitemap is fetched.
func TestFollower_AResourceListIndexBeyondTheBoundIsRefused(t *testing.T) {
	r := newRig(t)
	maps := make([]string, maxSitemaps+1)
	for i := range maps {
		maps[i] = "/m.xml"
	}
	r.src.set("/rli.xml", resourceListIndex(r.srv.URL, t1, maps...))
	r.src.set("/m.xml", resourceList(t1, "a@"+t0))
	f := r.followerOf("/rli.xml")
	if err := f.poll(context.Background()); err == nil || !strings.Contains(err.Error(), "more than 1000 sitemaps") {
		t.Fatalf("poll: %v, want the sitemap bound named", err)
	}
	if r.src.hits["/m.xml"] != 0 {
		t.Errorf("%d sitemaps fetched", r.src.hits["/m.xml"])
	}
}

// A Resource List diff carries what the Resource List says of each created
// or updated resource: its lastmod, its hash (md5 and sha-256, as given)
// and its length, so a mirror can check what it fetches; the change's
// datetime is the list's at, within the notification. A deletion carries
// none of them. Before, every entry had length -1, no hash, no lastmod.
func TestFollower_AResourceListDiffCarriesLastmodHashAndLength(t *testing.T) {
	r := newRig(t)
	type res struct{ loc, mod, hash, length string }
	list := func(at string, rs ...res) string {
		var b strings.Builder
		b.WriteString(rsHead + `<rs:md capability="resourcelist" at="` + at + `"/>`)
		for _, x := range rs {
			b.WriteString(`<url><loc>http://s.example/` + x.loc + `</loc><lastmod>` + x.mod + `</lastmod><rs:md hash="` + x.hash + `" length="` + x.length + `"/></url>`)
		}
		return b.String() + `</urlset>`
	}
	const (
		h1 = "md5:1e621df39e053ff6bc7db7bb1c616cc1 sha-256:854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784"
		h2 = "md5:0988647082c8bc51778894a48ec3b576 sha-256:9a4d8f7d4e42eef77f0d1f2e2a1b4d8e2d1c0f0a1b2c3d4e5f60718293a4b5c6"
		h3 = "md5:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	)
	r.src.set("/rl.xml", list(t1, res{"a", t0, h1, "11"}, res{"b", t0, h1, "11"}))
	f := r.followerOf("/rl.xml")
	r.poll(t, f)
	r.src.set("/rl.xml", list(t3, res{"a", t2, h2, "12"}, res{"c", t1, h3, "7"}))
	r.poll(t, f)
	got := map[string]string{}
	for _, e := range r.hub.all {
		got[strings.TrimPrefix(e.Loc, "http://s.example/")] = fmt.Sprintf("%s datetime=%s lastmod=%s hash=%q length=%d",
			e.MD.Change, e.MD.DateTime.Time.Format(time.RFC3339), e.LastMod.Raw, e.MD.Hash, e.MD.Length)
	}
	want := map[string]string{
		"a": `updated datetime=` + t3 + ` lastmod=` + t2 + ` hash="` + h2 + `" length=12`,
		"b": `deleted datetime=` + t3 + ` lastmod= hash="" length=-1`,
		"c": `created datetime=` + t3 + ` lastmod=` + t1 + ` hash="` + h3 + `" length=7`,
	}
	for loc, w := range want {
		if got[loc] != w {
			t.Errorf("%s: %s\n want %s", loc, got[loc], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("published %v, want %v", got, want)
	}
}

// A hash a notification may not carry (read by a lenient channel: an
// unknown algorithm, a digest of the wrong size) is left out of the diff's
// entry, its length and lastmod kept: the diff is published, not refused.
func TestDiffEntry_AHashANotificationMayNotCarryIsLeftOut(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 3, 0, time.UTC)
	for _, hash := range []string{"md5:abc", "crc32:0011aabb", "md5"} {
		e := diffEntry(rldiff.Change{Item: rldiff.Item{Loc: "http://s.example/a", Hash: hash, Length: 5, LastMod: at}, Change: changefeed.Updated}, at)
		if e.MD.Hash != "" || e.MD.Length != 5 || !e.LastMod.Time.Equal(at) {
			t.Errorf("hash %q: entry hash %q length %d lastmod %v", hash, e.MD.Hash, e.MD.Length, e.LastMod.Time)
		}
	}
}
