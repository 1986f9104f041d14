package follow

import (
	"context"
	"strings"
	"testing"
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
