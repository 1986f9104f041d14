package hub_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

const fwToken = "framework-token-0123456789"

// fwPayload is a framework notification with one entry.
func fwPayload(capability, change string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="framework-notification"/>
<url><loc>http://example.com/dataset1/resourcelist.xml</loc><rs:md change="` + change + `" capability="` + capability + `"/></url>
</urlset>
`
}

// A Source publishes framework notifications to its channel's framework
// topic (RSF-1): accepted without from/until (RSF-2), stored under the
// framework channel's name; one that breaks an RSF rule is refused with 400
// naming it; change and framework notifications never share a topic (RSN-3).
func TestFrameworkChannel_SourcePublishValidatedAndStored(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Name: "demo", Hosted: true, Trust: hub.TrustToken, Token: fwToken})
	fwTopic := hub.FrameworkTopic(f.URL, "demo")
	if want := strings.TrimSuffix(f.URL, "/") + "/topics/demo-framework"; fwTopic != want {
		t.Fatalf("FrameworkTopic = %q, want %q", fwTopic, want)
	}
	auth := []string{"Authorization", "Bearer " + fwToken}
	ex1, err := os.ReadFile("../changefeed/testdata/spec/framework_ex1_payload.xml")
	if err != nil {
		t.Fatal(err)
	}

	status, body := f.PostXML(string(ex1), hubtest.Links(fwTopic, f.URL), auth...)
	if status != 200 {
		t.Fatalf("Example 1 to the framework topic: %d %s", status, body)
	}
	rec, err := f.Log.Next(context.Background(), "demo-framework", 1)
	if err != nil || rec.Topic != fwTopic || string(rec.Body) != string(ex1) || !rec.From.IsZero() {
		t.Fatalf("stored %+v, %v", rec, err)
	}
	if status, _ := f.PostXML(string(ex1), hubtest.Links(fwTopic, f.URL), auth...); status != 200 {
		t.Errorf("a retried publish: %d", status)
	}

	for _, tc := range []struct {
		name, topic, body, want string
		status                  int
	}{
		{"ResourceListDeleted", fwTopic, fwPayload("resourcelist", "deleted"), "framework-change", 400},
		{"ResourceDumpUpdated", fwTopic, fwPayload("resourcedump", "updated"), "framework-change", 400},
		{"NotificationChannelNamed", fwTopic, fwPayload("change-notification", "created"), "framework-capability", 400},
		{"ChangeNotificationOnFrameworkTopic", fwTopic, hubtest.Notif("change-notification", t0, t1, t0), "capability", 400},
		{"FrameworkNotificationOnChangeTopic", ch.Topic, string(ex1), "capability", 400},
		{"WrongToken", fwTopic, string(ex1), "token", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := auth
			if tc.status == 403 {
				hdr = []string{"Authorization", "Bearer wrong-token-0123456789"}
			}
			status, body := f.PostXML(tc.body, hubtest.Links(tc.topic, f.URL), hdr...)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("got %d %q, want %d naming %q", status, body, tc.status, tc.want)
			}
		})
	}
}

// The framework channel is a hosted topic like any other: HEAD/GET answer
// with Link self and hub, a WebSub subscription to it is verified and
// kept, and its name is reserved.
func TestFrameworkChannel_HostedSubscribableReserved(t *testing.T) {
	f := newFixture(t)
	f.Channel(hub.Channel{Name: "demo", Hosted: true, Trust: hub.TrustOpen})
	fwTopic := hub.FrameworkTopic(f.URL, "demo")

	status, _ := hubtest.Do(t, mustReq(http.MethodHead, fwTopic))
	if status != http.StatusNoContent { // no framework notification yet
		t.Fatalf("HEAD framework topic: %d", status)
	}
	resp, err := http.Head(fwTopic)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ls := wire.ParseLinks(resp.Header.Values("Link"))
	if got := wire.LinksRel(ls, wire.RelSelf); len(got) != 1 || got[0] != fwTopic {
		t.Errorf("Link self = %v", got)
	}
	if status, _ := hubtest.Do(t, mustReq(http.MethodHead, strings.TrimSuffix(f.URL, "/")+"/topics/nope-framework")); status != 404 {
		t.Errorf("framework topic of no channel: %d", status)
	}

	cb := hubtest.NewCallback(t)
	if status, body := f.PostForm(hubtest.SubscribeForm(fwTopic, cb.URL("/cb"))); status != 202 {
		t.Fatalf("subscribe: %d %s", status, body)
	}
	sub := f.WaitActive(fwTopic, cb.URL("/cb"))
	if sub.Channel != "demo-framework" {
		t.Errorf("subscription channel %q", sub.Channel)
	}

	if _, err := f.Hub.PutChannel(context.Background(), hub.Channel{Name: "demo-framework", Hosted: true, Trust: hub.TrustOpen}); err == nil {
		t.Error("a channel took the name of a framework channel")
	}
}
