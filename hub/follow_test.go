package hub_test

import (
	"context"
	"errors"
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
			got, err := f.hub.CheckChannel(tt.in)
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

func TestPublishFollowed_NewEntriesAfterTheAnchorOnly(t *testing.T) {
	f := newFixture(t)
	ch := f.channel(hub.Channel{Name: "src", Follow: "http://127.0.0.1:1/cl.xml", Validation: "lenient"})
	doc, _, err := hub.ParseFollowed([]byte(clNoFrom), "http://example.org/cl.xml", true, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := f.hub.PublishFollowed(ctx, ch, doc)
	if err != nil || res.Unchanged {
		t.Fatalf("first publish: %+v, %v", res, err)
	}
	if res, err = f.hub.PublishFollowed(ctx, ch, doc); err != nil || !res.Unchanged {
		t.Fatalf("second publish of the same list: %+v, %v; want unchanged", res, err)
	}
	st, err := f.hub.Continuity(ctx, ch)
	if err != nil || !st.LastUntil.Equal(time.Date(2024, 1, 1, 0, 0, 2, 0, time.UTC)) {
		t.Fatalf("anchor %s, %v", st.LastUntil, err)
	}
	if code, body := f.postForm(map[string][]string{"hub.mode": {"publish"}, "hub.url": {ch.Topic}}); code != 409 {
		t.Errorf("thin ping of a followed channel: %d %s, want 409", code, body)
	}
}
