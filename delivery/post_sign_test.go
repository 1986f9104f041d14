package delivery

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

// signedRequest is what a callback received.
type signedRequest struct {
	header http.Header
	body   []byte
}

// capture serves a callback that records each request on a channel.
func capture(t *testing.T) (*httptest.Server, chan signedRequest) {
	t.Helper()
	got := make(chan signedRequest, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- signedRequest{r.Header.Clone(), b}
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// TestPost_SignsBySubscriptionSchemeElseHubDefault posts over loopback
// and checks which signature headers each combination of a
// subscription's scheme and the hub's default carries, and that each
// verifies.
func TestPost_SignsBySubscriptionSchemeElseHubDefault(t *testing.T) {
	t.Parallel()
	srv, got := capture(t)
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		sub, hubDefault  string
		websub, standard bool
	}{
		{"", "", true, false},
		{"", wire.SchemeWebSub, true, false},
		{"", wire.SchemeStandard, false, true},
		{"", wire.SchemeBoth, true, true},
		{wire.SchemeStandard, "", false, true},
		{wire.SchemeBoth, wire.SchemeWebSub, true, true},
		{wire.SchemeWebSub, wire.SchemeStandard, true, false},
		{wire.SchemeStandard, wire.SchemeBoth, false, true},
	}
	for _, tt := range tests {
		t.Run("sub="+tt.sub+",hub="+tt.hubDefault, func(t *testing.T) {
			w := NewWebhooks(nil, nil, Config{
				HubURL: testHubURL, Scheme: tt.hubDefault, Clock: func() time.Time { return now },
				Client: netguard.NewClient(loopbackPolicy(t), netguard.Timeouts{Request: 10 * time.Second}),
			})
			sub := hub.Subscription{ID: "0123abcd", Callback: srv.URL + "/cb", Secret: "s3cret", Scheme: tt.sub}
			rec := wire.Record{Seq: 42, Topic: "http://example.org/t", Body: []byte("<urlset/>"), ContentType: "application/xml", Epoch: "5eed"}
			if a := w.post(context.Background(), nil, new(*target), sub, rec); !a.ok() {
				t.Fatalf("post: %s", a.reason())
			}
			r := <-got
			if has := r.header.Get(wire.HeaderSignature) != ""; has != tt.websub {
				t.Fatalf("X-Hub-Signature present %v, want %v", has, tt.websub)
			}
			if tt.websub {
				if err := wire.Verify(r.header.Get(wire.HeaderSignature), sub.Secret, r.body); err != nil {
					t.Fatal(err)
				}
			}
			if has := r.header.Get("webhook-signature") != ""; has != tt.standard {
				t.Fatalf("webhook-signature present %v, want %v", has, tt.standard)
			}
			if tt.standard {
				id, ts := r.header.Get("webhook-id"), r.header.Get("webhook-timestamp")
				if id != "msg_0123abcd_5eed-42" || ts != "1800000000" { // the log's epoch: a rebuilt log never repeats an id
					t.Fatalf("webhook-id %q, webhook-timestamp %q", id, ts)
				}
				if _, err := wire.VerifyStandard(sub.Secret, id, ts, r.header.Get("webhook-signature"), r.body, now, 0); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestPost_RetryKeepsWebhookIDWithAFreshTimestamp: every attempt of one
// notification to one subscription carries the same webhook-id and the
// time of that attempt.
func TestPost_RetryKeepsWebhookIDWithAFreshTimestamp(t *testing.T) {
	t.Parallel()
	srv, got := capture(t)
	clock := time.Unix(1_800_000_000, 0)
	w := NewWebhooks(nil, nil, Config{
		HubURL: testHubURL, Scheme: wire.SchemeStandard, Clock: func() time.Time { return clock },
		Client: netguard.NewClient(loopbackPolicy(t), netguard.Timeouts{Request: 10 * time.Second}),
	})
	sub := hub.Subscription{ID: "feed", Callback: srv.URL, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
	rec := wire.Record{Seq: 7, Body: []byte("<urlset/>")}
	var first, second signedRequest
	for i, r := range []*signedRequest{&first, &second} {
		if i == 1 {
			clock = clock.Add(90 * time.Second)
		}
		if a := w.post(context.Background(), nil, new(*target), sub, rec); !a.ok() {
			t.Fatalf("post: %s", a.reason())
		}
		*r = <-got
	}
	if first.header.Get("webhook-id") != second.header.Get("webhook-id") {
		t.Fatalf("ids differ: %q %q", first.header.Get("webhook-id"), second.header.Get("webhook-id"))
	}
	if first.header.Get("webhook-timestamp") != "1800000000" || second.header.Get("webhook-timestamp") != "1800000090" {
		t.Fatalf("timestamps %q %q", first.header.Get("webhook-timestamp"), second.header.Get("webhook-timestamp"))
	}
	other := w.post(context.Background(), nil, new(*target), sub, wire.Record{Seq: 8, Body: rec.Body})
	if !other.ok() || (<-got).header.Get("webhook-id") == first.header.Get("webhook-id") {
		t.Fatal("another sequence has the same webhook-id")
	}
}

// TestPost_BadStandardSecretIsPermanent: a whsec_ secret that is not
// base64 cannot be signed with; the attempt fails at once, with the reason.
func TestPost_BadStandardSecretIsPermanent(t *testing.T) {
	t.Parallel()
	w := NewWebhooks(nil, nil, Config{HubURL: testHubURL, Scheme: wire.SchemeStandard})
	to := &target{callback: "http://192.0.2.1/", url: &url.URL{Scheme: "http", Host: "192.0.2.1", Path: "/"}}
	_, err := w.newRequest(context.Background(), to, hub.Subscription{ID: "x", Callback: to.callback, Secret: "whsec_***"}, wire.Record{Seq: 1}, nil)
	if err == nil {
		t.Fatal("signed with a bad whsec_ secret")
	}
	_, err = w.newRequest(context.Background(), to, hub.Subscription{ID: "x", Callback: to.callback, Secret: "k", Scheme: "md5"}, wire.Record{Seq: 1}, nil)
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("unknown scheme: %v", err)
	}
}

// Deliveries of records of different topics and resourcesync links, one
// after another, each get their own record's Link header, however the
// last one is remembered.
func TestLinkHeader_FollowsEachRecord(t *testing.T) {
	t.Parallel()
	w := NewWebhooks(nil, nil, Config{HubURL: testHubURL})
	recs := []wire.Record{
		{Topic: "http://a.example/t"},
		{Topic: "http://b.example/t"},
		{Topic: "http://b.example/t", ResourceSync: "http://b.example/rs"},
		{Topic: "http://a.example/t"},
		{Topic: "http://a.example/t"},
	}
	for i, rec := range recs {
		if got, want := w.linkHeader(rec), wire.NotificationLinks(rec.Topic, testHubURL, rec.ResourceSync); got != want {
			t.Errorf("record %d: Link %q, want %q", i, got, want)
		}
	}
}
