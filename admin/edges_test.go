package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// Admin API lists are [] when empty, never null.
func TestAdmin_EmptyListsAreArraysNotNull(t *testing.T) {
	f := newFixture(t, func(_ *hub.Config, c *admin.Config) { c.Deliveries = stubDeliveries{} })
	cb := hubtest.NewCallback(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	for _, path := range []string{"/admin/channels", "/admin/subscriptions", "/admin/subscriptions?topic=" + url.QueryEscape(ch.Topic), "/admin/deliveries"} {
		if status, body := f.adminDo(http.MethodGet, path, ""); status != 200 || strings.TrimSpace(body) != "[]" && path != "/admin/channels" {
			t.Errorf("GET %s: %d %q, want []", path, status, body)
		}
	}
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	if status, body := f.adminDo(http.MethodGet, "/admin/subscriptions/"+sub.ID+"/deadletters", ""); status != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("dead letters: %d %q, want []", status, body)
	}
	if status, body := f.adminDo(http.MethodGet, "/admin/subscriptions?topic=http://127.0.0.1:1/unknown", ""); status != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("subscriptions of an unknown topic: %d %q, want []", status, body)
	}
	for _, path := range []string{"/admin/channels", "/admin/channels/" + ch.Name} {
		if status, body := f.adminDo(http.MethodGet, path, ""); status != 200 || !strings.Contains(body, `"gaps": []`) ||
			!strings.Contains(body, `"resets": []`) || !strings.Contains(body, `"topic": "`+ch.Topic+`"`) {
			t.Errorf("GET %s: %d %q, want the channel with gaps and resets []", path, status, body)
		}
	}
	if status, body := f.adminDo(http.MethodGet, "/admin/channels/"+ch.Name+"/continuity", ""); status != 200 ||
		!strings.Contains(body, `"gaps": []`) || !strings.Contains(body, `"resets": []`) {
		t.Errorf("continuity: %d %q, want gaps and resets []", status, body)
	}
}

// An ID, name or topic the store cannot take is answered 400 or 404 with a
// reason at the edge, never 500; a well-formed one the store does not hold
// is a 404.
func TestAdmin_MalformedIDsAndNamesRefusedAtTheEdge(t *testing.T) {
	f := newFixture(t, func(_ *hub.Config, c *admin.Config) { c.Deliveries = stubDeliveries{err: hub.ErrNotFound} })
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	unknownSub := hub.SubscriptionID(ch.Topic, "http://127.0.0.1:1/other")
	long := strings.Repeat("a", 10<<10)
	for _, tc := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", "/admin/subscriptions/%00", 400, "32 lowercase hex"},
		{"GET", "/admin/subscriptions/" + long, 400, "32 lowercase hex"},
		{"GET", "/admin/subscriptions/" + strings.ToUpper(sub.ID), 400, "32 lowercase hex"},
		{"DELETE", "/admin/subscriptions/..%2f..%2fx", 400, "32 lowercase hex"},
		{"GET", "/admin/subscriptions/%00/deadletters", 400, "32 lowercase hex"},
		{"GET", "/admin/subscriptions/" + unknownSub, 404, "no subscription " + unknownSub},
		{"DELETE", "/admin/subscriptions/" + unknownSub, 404, "no subscription"},
		{"GET", "/admin/subscriptions/" + unknownSub + "/deadletters", 404, "no subscription"},
		{"POST", "/admin/subscriptions/%00/deadletters/00000000000000000001/redrive", 400, "32 lowercase hex"},
		{"POST", "/admin/subscriptions/" + sub.ID + "/deadletters/%00/redrive", 400, "dead letter id"},
		{"POST", "/admin/subscriptions/" + sub.ID + "/deadletters/" + long + "/redrive", 400, "dead letter id"},
		{"POST", "/admin/subscriptions/" + sub.ID + "/deadletters/00000000000000000001/redrive", 404, "not found"},
		{"GET", "/admin/subscriptions?topic=" + strings.Repeat("x", 100<<10), 400, "8192 bytes"},
		{"GET", "/admin/subscriptions?topic=" + strings.Repeat("x", hub.MaxTopicLen+1), 400, "8192 bytes"},
		{"GET", "/admin/channels/%00", 400, "channel name"},
		{"GET", "/admin/channels/" + long, 400, "channel name"},
		{"DELETE", "/admin/channels/a%20b", 400, "channel name"},
		{"GET", "/admin/channels/nope", 404, "no channel named nope"},
		{"GET", "/admin/channels/%00/continuity", 400, "channel name"},
		{"GET", "/admin/channels/nope/continuity", 404, "no channel named nope"},
	} {
		t.Run(tc.method+" "+tc.path[:min(len(tc.path), 80)], func(t *testing.T) {
			status, body := f.adminDo(tc.method, tc.path, "")
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("got %d %q, want %d mentioning %q", status, body[:min(len(body), 300)], tc.status, tc.want)
			}
			if len(body) > 1024 {
				t.Fatalf("answer of %d bytes echoes the input", len(body))
			}
		})
	}
	// the subscription is untouched
	if status, body := f.adminDo(http.MethodGet, "/admin/subscriptions/"+sub.ID, ""); status != 200 || !strings.Contains(body, sub.ID) {
		t.Fatalf("subscription after the refusals: %d %q", status, body)
	}
}

// A redrive the delivery engine could not complete is a 502 with its reason.
func TestAdmin_RedriveFailureIs502(t *testing.T) {
	f := newFixture(t, func(_ *hub.Config, c *admin.Config) { c.Deliveries = stubDeliveries{err: errRedrive} })
	id := hub.SubscriptionID(openTopic, "http://127.0.0.1:1/cb")
	status, body := f.adminDo(http.MethodPost, "/admin/subscriptions/"+id+"/deadletters/00000000000000000007/redrive", "")
	if status != http.StatusBadGateway || !strings.Contains(body, "callback answered 500") {
		t.Fatalf("%d %q, want 502 with the reason", status, body)
	}
}

var errRedrive = &redriveErr{}

type redriveErr struct{}

func (*redriveErr) Error() string { return "delivery: redrive of 7: callback answered 500" }
