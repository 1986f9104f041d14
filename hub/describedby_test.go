package hub_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// A channel's dataset description (describedBy) is an absolute http(s) URL
// within the hub's URI limit, or nothing.
func TestCheckChannel_DescribedByIsAnAbsoluteHTTPURL(t *testing.T) {
	f := newFixture(t)
	long := "http://example.com/" + strings.Repeat("d", hub.MaxTopicLen)
	tests := []struct {
		describedBy string
		ok          bool
	}{
		{"", true},
		{"http://example.com/dataset1/description.xml", true},
		{"https://example.com/d?format=rdf", true},
		{"/dataset1/description.xml", false},
		{"ftp://example.com/d.xml", false},
		{"http:///d.xml", false},
		{"http://user:pw@example.com/d.xml", false},
		{"http://example.com/%zz", false},
		{long, false},
	}
	for _, tt := range tests {
		got, err := f.Hub.CheckChannel(hub.Channel{Topic: "http://example.com/t", Token: "a-token-of-16-chars-or-more", DescribedBy: tt.describedBy})
		if (err == nil) != tt.ok {
			t.Errorf("describedBy %.60q: err %v, want ok %v", tt.describedBy, err, tt.ok)
			continue
		}
		if err == nil && got.DescribedBy != tt.describedBy {
			t.Errorf("describedBy %q became %q", tt.describedBy, got.DescribedBy)
		}
		if err != nil && !strings.Contains(err.Error(), "describedBy") {
			t.Errorf("describedBy %.60q: error %q does not name the field", tt.describedBy, err)
		}
	}
	if _, err := f.Hub.PutChannel(context.Background(), hub.Channel{Name: "x", Hosted: true, Trust: hub.TrustOpen, DescribedBy: "relative"}); err == nil {
		t.Error("PutChannel stored a relative describedBy")
	}
}

// A hosted topic's Link header names the channel's dataset description
// with rel="describedby" when it has one, besides self, hub and
// resourcesync.
func TestHostedTopic_LinkDescribedBy(t *testing.T) {
	f := newFixture(t)
	const desc = "http://example.com/dataset1/description.xml"
	with := f.Channel(hub.Channel{Name: "withdesc", Hosted: true, Trust: hub.TrustOpen, DescribedBy: desc})
	without := f.Channel(hub.Channel{Name: "nodesc", Hosted: true, Trust: hub.TrustOpen})
	for _, tt := range []struct {
		ch   hub.Channel
		want string
	}{{with, desc}, {without, ""}} {
		for _, m := range []string{http.MethodHead, http.MethodGet} {
			req, _ := http.NewRequest(m, tt.ch.Topic, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			ls := wire.ParseLinks(resp.Header.Values("Link"))
			if resp.StatusCode != http.StatusNoContent || wire.FirstLink(ls, wire.RelSelf) != tt.ch.Topic || wire.FirstLink(ls, wire.RelHub) != f.URL ||
				wire.FirstLink(ls, wire.RelResourceSync) != f.Server.URL+wire.CapabilityListPath(tt.ch.Name) {
				t.Errorf("%s %s: %d, Link %q", m, tt.ch.Topic, resp.StatusCode, resp.Header.Values("Link"))
			}
			if got := wire.FirstLink(ls, wire.RelDescribedBy); got != tt.want {
				t.Errorf("%s %s: describedby %q, want %q", m, tt.ch.Topic, got, tt.want)
			}
		}
	}
}
