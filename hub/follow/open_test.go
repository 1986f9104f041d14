package follow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

func capList(base string, entries ...[2]string) string {
	var b strings.Builder
	b.WriteString(rsHead + `<rs:md capability="capabilitylist"/>`)
	for _, e := range entries {
		b.WriteString(`<url><loc>` + base + e[0] + `</loc><rs:md capability="` + e[1] + `"/></url>`)
	}
	return b.String() + `</urlset>`
}

func archive(base string, lists ...[3]string) string {
	var b strings.Builder
	b.WriteString(rsHead + `<rs:md capability="changelist-archive"/>`)
	for _, l := range lists {
		b.WriteString(`<url><loc>` + base + l[0] + `</loc><rs:md from="` + l[1] + `" until="` + l[2] + `"/></url>`)
	}
	return b.String() + `</urlset>`
}

func (r *rig) followerOf(path string) *follower {
	return newFollower(r.e, hub.Channel{Name: "c", Follow: r.srv.URL + path, PollInterval: "1s", Validation: hub.ValidationStrict})
}

func (r *rig) poll(t *testing.T, f *follower) {
	t.Helper()
	if err := f.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The resync reference Source serves one Change List, regenerated on every
// request with until set to the time of the request: it is the list the
// Capability List names, so it stays open and is read on every poll.
func TestFollower_AListTheCapabilityListNamesStaysOpenWhateverItsUntil(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}))
	r.src.set("/cl.xml", cl(t0, t1, "a@"+t1))
	f := r.followerOf("/cap.xml")
	r.poll(t, f)
	r.src.set("/cl.xml", cl(t0, t3, "a@"+t1, "b@"+t2))
	r.poll(t, f)
	r.src.set("/cl.xml", cl(t0, t4, "a@"+t1, "b@"+t2, "c@"+t4))
	r.poll(t, f)
	if got := r.hub.published(); got != "a b c" {
		t.Fatalf("published %q, want a b c", got)
	}
	// the last list of an index is open too, whatever its until
	r2 := newRig(t)
	r2.src.set("/idx.xml", index(r2.srv.URL, [3]string{"/1.xml", t0, t1}))
	r2.src.set("/1.xml", cl(t0, t1, "a@"+t1))
	g := r2.follower()
	r2.poll(t, g)
	r2.src.set("/1.xml", cl(t0, t2, "a@"+t1, "b@"+t2))
	r2.poll(t, g)
	if got := r2.hub.published(); got != "a b" {
		t.Fatalf("index: published %q, want a b", got)
	}
}

// A list in the Change List Archive is closed: read to its end once, then
// never again, while the open list is read on every poll.
func TestFollower_AListInTheArchiveIsClosedAndReadToItsEndOnce(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}, [2]string{"/archive.xml", "changelist-archive"}))
	r.src.set("/archive.xml", archive(r.srv.URL))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1))
	f := r.followerOf("/cap.xml")
	r.poll(t, f)
	// between two polls the open list grows, moves into the archive, and a
	// new open list starts where it ended
	r.src.set("/old.xml", cl(t0, t2, "a@"+t1, "b@"+t2))
	r.src.set("/archive.xml", archive(r.srv.URL, [3]string{"/old.xml", t0, t2}))
	r.src.set("/cl.xml", cl(t2, "", "c@"+t3))
	r.poll(t, f)
	r.src.set("/cl.xml", cl(t2, "", "c@"+t3, "d@"+t4))
	before := r.src.hits["/old.xml"]
	r.poll(t, f)
	if got := r.hub.published(); got != "a b c d" {
		t.Fatalf("published %q, want a b c d", got)
	}
	if r.src.hits["/old.xml"] != before || len(r.hub.gaps) != 0 {
		t.Errorf("the archived list was read %d more times; gaps %+v", r.src.hits["/old.xml"]-before, r.hub.gaps)
	}
}

// Changes written with the anchor's very datetime after a poll are
// published, none twice, also by a follower that starts again (it learns
// the anchor's entries from the hub's log).
func TestFollower_ChangesAtTheAnchorsDatetimeAreNeitherLostNorRepeated(t *testing.T) {
	r := newRig(t)
	r.src.set("/idx.xml", index(r.srv.URL, [3]string{"/1.xml", t0, ""}))
	r.src.set("/1.xml", cl(t0, "", "a@"+t1))
	f := r.follower()
	r.poll(t, f)
	r.src.set("/1.xml", cl(t0, "", "a@"+t1, "b@"+t1))
	r.poll(t, f)
	r.src.set("/1.xml", cl(t0, "", "a@"+t1, "b@"+t1, "a@"+t1, "c@"+t1))
	r.poll(t, f)
	r.src.set("/1.xml", cl(t0, "", "a@"+t1, "b@"+t1, "a@"+t1, "c@"+t1, "d@"+t1))
	g := r.follower()
	r.poll(t, g)
	r.poll(t, g)
	if got := r.hub.published(); got != "a b c d" {
		t.Fatalf("published %q, want a b c d", got)
	}
}

// An open list that rotates between two polls when the Source offers no
// index or archive: what it held after the last poll cannot be read, and
// the hub is told so (a notification whose from is after the previous
// until: a gap in the channel's history and in the follow status).
func TestFollower_AnOpenListRotatedWithoutArchiveIsAGapInTheStatus(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1))
	f := r.followerOf("/cap.xml")
	r.poll(t, f)
	r.src.set("/cl.xml", cl(t3, "", "d@"+t4))
	r.poll(t, f)
	if got := r.hub.published(); got != "a d" {
		t.Fatalf("published %q", got)
	}
	st := f.status()
	if len(r.hub.gaps) != 1 || st.Gaps != 1 || st.LastGap == nil || st.LastGap.From.Format(time.RFC3339) != t1 || st.LastGap.Until.Format(time.RFC3339) != t3 {
		t.Fatalf("gaps %+v, status %d %+v; want one gap [t1, t3]", r.hub.gaps, st.Gaps, st.LastGap)
	}
}

func entry(loc, dt, hash string) changefeed.Entry {
	tm, _ := time.Parse(time.RFC3339, dt)
	return changefeed.Entry{Loc: loc, MD: &changefeed.MD{Change: changefeed.Updated, Hash: hash, Length: -1, DateTime: changefeed.DateTime{Time: tm, Raw: dt}}}
}

func TestFresh_ByIdentityAtTheAnchorInOrderOnce(t *testing.T) {
	at1 := func(loc, hash string) changefeed.Entry { return entry(loc, t1, hash) }
	list := []changefeed.Entry{entry("z", t2, ""), at1("a", "md5:1"), entry("old", t0, ""), at1("a", "md5:2"), at1("b", ""), at1("b", ""), {Loc: "timeless"}}
	anchor, _ := time.Parse(time.RFC3339, t1)
	tests := []struct {
		name string
		seen changefeed.Seen
		want string
	}{
		{"no anchor: every timed entry once, in order", changefeed.Seen{}, "old a a b z"},
		{"at the anchor: those not published", changefeed.SeenAt(anchor, []changefeed.Entry{at1("a", "md5:1")}, true), "a b z"},
		{"unknown anchor entries: all at the anchor held", changefeed.SeenAt(anchor, nil, false), "z"},
		{"later anchor: nothing at the old one", changefeed.Advance(changefeed.SeenAt(anchor, nil, true), []changefeed.Entry{entry("z", t2, "")}, anchor.Add(time.Second)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range changefeed.Fresh(list, tt.seen) {
				got = append(got, e.Loc)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("Fresh = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestWindow_FromTheAnchorOrTheListAfterAGap(t *testing.T) {
	tm := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	fresh := []changefeed.Entry{entry("a", t2, ""), entry("b", t3, "")}
	tests := []struct {
		name                              string
		anchor, covered, listFrom, listTo string
		closed                            bool
		from, until                       string
	}{
		{"first: the list's from", "", "", t0, "", false, t0, t3},
		{"contiguous: the anchor", t1, t1, t0, "", false, t1, t3},
		{"an open list's until is not a promise", t1, t1, t0, t4, false, t1, t3},
		{"a closed list's until", t1, t1, t0, t4, true, t1, t4},
		{"the list starts after what the channel holds: a gap", t0, t0, t1, "", false, t1, t3},
		{"a closed list read to its end covers up to its until", t0, t1, t1, "", false, t0, t3},
		{"never after the first entry", t0, t0, t4, "", false, t2, t3},
	}
	parse := func(s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		return tm(s)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, until := Window(parse(tt.anchor), parse(tt.covered), parse(tt.listFrom), parse(tt.listTo), tt.closed, fresh)
			if !from.Equal(tm(tt.from)) || !until.Equal(tm(tt.until)) {
				t.Errorf("Window = %s, %s; want %s, %s", from, until, tt.from, tt.until)
			}
		})
	}
}
