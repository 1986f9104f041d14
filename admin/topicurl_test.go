package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
)

// The subscriptions of a topic are listed whatever the spelling of the
// topic in the query (RFC 3986 §6.2.2); those stored under another
// spelling before topics were normalised are listed by that spelling too.
// A topic that is not a URL is 400, not a store outage.
func TestAdmin_SubscriptionsOfATopicInAnySpelling(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: "http://127.0.0.1:1/topic/~alice", Trust: hub.TrustOpen})
	f.seedSubs(ch.Topic, ch.Name, 2)
	f.seedSubs("http://127.0.0.1:1/topic/%7ealice", ch.Name, 3) // stored in another spelling
	for _, spelling := range []string{ch.Topic, "HTTP://127.0.0.1:1/topic/%7Ealice", "http://127.0.0.1:1/topic/%7ealice"} {
		subs, _ := f.walk("/admin/subscriptions?limit=2&topic=" + url.QueryEscape(spelling))
		want := 2
		if spelling == "http://127.0.0.1:1/topic/%7ealice" {
			want = 5
		}
		if len(subs) != want {
			t.Errorf("subscriptions of %s: %d listed, want %d", spelling, len(subs), want)
		}
	}
	if status, body := f.adminDo(http.MethodGet, "/admin/subscriptions?topic="+url.QueryEscape("http://127.0.0.1:1/\xff"), ""); status != 400 || !strings.Contains(body, "UTF-8") {
		t.Errorf("a topic that is not UTF-8: %d %q, want 400", status, body)
	}
}
