package hub_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

func TestCheckChannel_FollowedChannelFields(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name    string
		in      hub.Channel
		wantErr string
		check   func(hub.Channel) bool
	}{
		{"hosted by default, trust follow, strict", hub.Channel{Name: "src", Follow: "http://127.0.0.1:1/cl.xml"}, "",
			func(c hub.Channel) bool {
				return c.Hosted && c.Trust == hub.TrustFollow && c.Validation == hub.ValidationStrict && strings.HasSuffix(c.Topic, "/topics/src")
			}},
		{"named after the Source", hub.Channel{Follow: "http://127.0.0.1:1/cl.xml", Validation: "lenient", PollInterval: "50ms"}, "",
			func(c hub.Channel) bool { return c.Name != "" && c.Lenient() && c.PollEvery() == 50*time.Millisecond }},
		{"own topic kept", hub.Channel{Topic: "http://example.org/t", Follow: "http://127.0.0.1:1/cl.xml"}, "",
			func(c hub.Channel) bool { return !c.Hosted && c.Topic == "http://example.org/t" }},
		{"bad source", hub.Channel{Name: "x", Follow: "ftp://x/"}, "follow", nil},
		{"bad interval", hub.Channel{Name: "x", Follow: "http://127.0.0.1:1/", PollInterval: "1ns"}, "pollInterval", nil},
		{"bad validation", hub.Channel{Name: "x", Follow: "http://127.0.0.1:1/", Validation: "loose"}, "validation", nil},
		{"interval without follow", hub.Channel{Name: "x", Hosted: true, Trust: hub.TrustOpen, PollInterval: "1s"}, "followed channel only", nil},
		{"trust follow without follow", hub.Channel{Name: "x", Hosted: true, Trust: hub.TrustFollow}, "needs a Source URL", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Hub.CheckChannel(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(got) {
				t.Fatalf("CheckChannel = %+v, %v", got, err)
			}
		})
	}
}

const clNoFrom = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="changelist"/>
  <url><loc>res/b</loc><rs:md change="updated" datetime="2024-01-01T00:00:02Z"/></url>
  <url><loc>http://example.org/a</loc><rs:md change="created" datetime="2024-01-01T00:00:01Z"/></url>
  <url><loc>http://example.org/c</loc><rs:md change="created"/></url>
</urlset>`

func TestParseFollowed_StrictRefusesLenientRepairsAndRecords(t *testing.T) {
	if _, _, err := hub.ParseFollowed([]byte(clNoFrom), "http://example.org/cl.xml", false, 1<<20); !errors.Is(err, changefeed.ErrInvalid) {
		t.Fatalf("strict: %v, want a validation error", err)
	}
	doc, len_, err := hub.ParseFollowed([]byte(clNoFrom), "http://example.org/cl.xml", true, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, l := range len_ {
		rules[l.Rule] = true
	}
	for _, r := range []changefeed.Rule{changefeed.RuleRootAttributes, changefeed.RuleAbsoluteURI, changefeed.RuleChangeTime, changefeed.RuleOrder} {
		if !rules[string(r)] {
			t.Errorf("leniency %s not recorded: %+v", r, len_)
		}
	}
	if got := doc.MD.From.Time; !got.Equal(time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC)) {
		t.Errorf("repaired from %s, want the first entry's time", got)
	}
	if doc.Entries[0].Loc != "http://example.org/res/b" {
		t.Errorf("loc %q not resolved", doc.Entries[0].Loc)
	}
	// a valid document has no leniency
	ok := strings.Replace(clNoFrom, `capability="changelist"`, `capability="changelist" from="2024-01-01T00:00:00Z"`, 1)
	ok = strings.Replace(strings.Replace(ok, "<loc>res/b</loc>", "<loc>http://example.org/b</loc>", 1), `change="created"/>`, `change="created" datetime="2024-01-01T00:00:03Z"/>`, 1)
	ok = strings.Replace(ok, `datetime="2024-01-01T00:00:02Z"`, `datetime="2024-01-01T00:00:00Z"`, 1)
	if _, l, err := hub.ParseFollowed([]byte(ok), "http://example.org/cl.xml", true, 1<<20); err != nil || len(l) != 0 {
		t.Errorf("valid list: leniencies %+v, err %v", l, err)
	}
}

func followedEntry(loc string, sec int) changefeed.Entry {
	return changefeed.Entry{Loc: "http://example.org/" + loc, MD: &changefeed.MD{Change: changefeed.Updated, Length: -1,
		DateTime: changefeed.DateTime{Time: time.Date(2024, 1, 1, 0, 0, sec, 0, time.UTC), Raw: time.Date(2024, 1, 1, 0, 0, sec, 0, time.UTC).Format(time.RFC3339)}}}
}

// What a follower chooses is published with the window it gives, the
// anchor's entries are found again across the notifications that end at
// the anchor (with other channels' notifications between them), and a
// window starting after the anchor is recorded as a gap.
func TestPublishFollowed_ChosenEntriesAndTheAnchorsEntriesAcrossNotifications(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Name: "src", Follow: "http://127.0.0.1:1/cl.xml"})
	other := f.Channel(hub.Channel{Name: "other", Follow: "http://127.0.0.1:1/other.xml"})
	doc, _, err := hub.ParseFollowed([]byte(strings.Replace(clNoFrom, `capability="changelist"`, `capability="changelist" from="2024-01-01T00:00:00Z"`, 1)), "http://example.org/cl.xml", true, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := func(sec int) time.Time { return time.Date(2024, 1, 1, 0, 0, sec, 0, time.UTC) }
	publish := func(c hub.Channel, from, until int, locs ...string) hub.PublishResult {
		t.Helper()
		var es []changefeed.Entry
		for _, l := range locs {
			es = append(es, followedEntry(l, until))
		}
		res, err := f.Hub.PublishFollowed(ctx, c, hub.Followed{Doc: doc, Entries: es, From: at(from), Until: at(until)})
		if err != nil {
			t.Fatalf("publish %v: %v", locs, err)
		}
		return res
	}
	publish(ch, 0, 1, "x", "a")
	for i, loc := range []string{"b", "c"} {
		publish(other, i, i+1, "o"+loc) // the log between two notifications of ch
		publish(ch, 1, 1, loc)
	}
	st, at1, known, err := f.Hub.FollowAnchor(ctx, ch)
	var got []string
	for _, e := range at1 {
		got = append(got, strings.TrimPrefix(e.Loc, "http://example.org/"))
	}
	slices.Sort(got)
	if err != nil || !known || !st.LastUntil.Equal(at(1)) || strings.Join(got, " ") != "a b c x" {
		t.Fatalf("FollowAnchor = %s %v known %v, %v; want the four entries at the anchor", st.LastUntil, got, known, err)
	}
	if res := publish(ch, 1, 2, "d"); res.Gap != nil {
		t.Fatalf("contiguous window recorded a gap %+v", res.Gap)
	}
	if _, at2, known, _ := f.Hub.FollowAnchor(ctx, ch); !known || len(at2) != 1 || !strings.HasSuffix(at2[0].Loc, "/d") {
		t.Fatalf("after a later notification: %+v known %v", at2, known)
	}
	if res := publish(ch, 5, 6, "e"); res.Gap == nil || !res.Gap.From.Equal(at(2)) || !res.Gap.Until.Equal(at(5)) {
		t.Fatalf("a window after the anchor: gap %+v, want [2s, 5s]", res.Gap)
	}
	if res, err := f.Hub.PublishFollowed(ctx, ch, hub.Followed{Doc: doc, From: at(6), Until: at(6)}); err != nil || !res.Unchanged {
		t.Fatalf("nothing to publish: %+v %v", res, err)
	}
	if code, body := f.PostForm(map[string][]string{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}); code != 409 {
		t.Errorf("thin ping of a followed channel: %d %s, want 409", code, body)
	}
}
