package subscriber_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/rshub/rshub/client/subscriber"
	"github.com/rshub/rshub/wire"
)

const notification = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="change-notification" from="2026-01-02T10:00:00Z" until="2026-01-02T10:01:00Z"/>
  <url><loc>http://example.com/res1</loc><rs:md change="updated" datetime="2026-01-02T10:00:30Z"/></url>
</urlset>`

// Example subscribes a callback to a stand-in hub, which verifies intent
// and then delivers one signed notification.
func Example() {
	got := make(chan *subscriber.Notification, 1)
	var h *subscriber.Handler
	callbacks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer callbacks.Close()

	// the stand-in hub: verify intent with a GET, then deliver with a POST
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		callback, topic, secret := r.PostForm.Get("hub.callback"), r.PostForm.Get("hub.topic"), r.PostForm.Get("hub.secret")
		w.WriteHeader(http.StatusAccepted)
		go func() {
			q := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.challenge": {"c-123"}, "hub.lease_seconds": {"3600"}}
			resp, err := http.Get(callback + "&" + q.Encode())
			if err != nil {
				return
			}
			echo, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(echo) != "c-123" {
				return // no intent: no delivery
			}
			req, _ := http.NewRequest(http.MethodPost, callback, strings.NewReader(notification))
			req.Header.Set("Content-Type", "application/xml")
			req.Header.Set("Link", `<`+topic+`>; rel="self", <http://hub.example/>; rel="hub"`)
			sig, _ := wire.Sign("sha256", secret, []byte(notification))
			req.Header.Set(wire.HeaderSignature, sig)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer hub.Close()

	h, err := subscriber.New(subscriber.Config{
		Callback: callbacks.URL + "/callback",
		OnNotification: func(_ context.Context, n *subscriber.Notification) error {
			got <- n
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	sub, err := h.Subscribe(context.Background(), hub.URL, "http://example.com/dataset1/change/", subscriber.SubscribeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("subscribed, lease", sub.Lease, "with a secret:", sub.Secret != "")
	select {
	case n := <-got:
		e := n.Document.Entries[0]
		fmt.Printf("notification on %s, signed %v: %s %s\n", n.Topic, n.Signed, e.MD.Change, e.Loc)
	case <-time.After(10 * time.Second):
		fmt.Println("no notification")
	}
	// Output:
	// subscribed, lease 1h0m0s with a secret: true
	// notification on http://example.com/dataset1/change/, signed true: updated http://example.com/res1
}

// ExampleDiscover finds the hub and topic of a Source from its Source
// Description and Capability List.
func ExampleDiscover() {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/.well-known/resourcesync", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="description"/>
<url><loc>%s/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`, srv.URL)
	})
	mux.HandleFunc("/capabilitylist.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="capabilitylist"/>
<url><loc>%[1]s/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
<url><loc>%[1]s/topic</loc><rs:ln rel="hub" href="http://hub.example/"/><rs:md capability="change-notification"/></url>
</urlset>`, srv.URL)
	})
	ch, err := subscriber.Discover(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		panic(err)
	}
	fmt.Println("topic:", strings.Replace(ch.Topic, srv.URL, "SOURCE", 1))
	fmt.Println("hub:", ch.Hub)
	fmt.Println("resource list:", strings.Replace(ch.Capabilities["resourcelist"], srv.URL, "SOURCE", 1))
	// Output:
	// topic: SOURCE/topic
	// hub: http://hub.example/
	// resource list: SOURCE/resourcelist.xml
}
