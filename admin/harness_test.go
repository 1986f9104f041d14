package admin_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

// The fixture's hub: what hub's own tests use, with the admin API on the
// same mux.

const adminToken = "admin-secret-token" // the fixture's

const openTopic = "http://127.0.0.1:1/dataset1/change/"

// fixture is a running hub with its admin API over a real embedded NATS
// log and KV store, served on loopback.
type fixture struct {
	t     *testing.T
	hub   *hub.Hub
	log   hub.Log
	store hub.Store
	srv   *httptest.Server
	url   string // hub URL
}

// fixtureOpt edits the hub's and the admin API's configuration.
type fixtureOpt func(*hub.Config, *admin.Config)

// deactivations is the delivery engine as the hub sees it.
type deactivations struct{}

func (deactivations) Activate(hub.Subscription) {}
func (deactivations) Deactivate(string)         {}

func newFixture(t *testing.T, opts ...fixtureOpt) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, nc := testenv.NATS(t)
	lg, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lg.Close() })
	st, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := netguard.ParsePolicy([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, log: lg, store: st}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL + "/"
	cfg := hub.Config{
		HubURL:    f.url,
		Store:     st,
		Log:       lg,
		Client:    netguard.NewClient(pol, netguard.Timeouts{}),
		Activator: deactivations{},
		MaxBody:   1 << 20,
		Logger:    slog.New(slog.DiscardHandler),
	}
	acfg := admin.Config{Token: adminToken, Store: st, Logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg, &acfg)
	}
	h, err := hub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(mux)
	acfg.Hub = h
	api, err := admin.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	api.Register(mux)
	f.hub = h
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// channel creates a channel.
func (f *fixture) channel(c hub.Channel) hub.Channel {
	f.t.Helper()
	c, err := f.hub.PutChannel(context.Background(), c)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// adminDo sends an admin API request with the fixture's token.
func (f *fixture) adminDo(method, path, body string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return do(f.t, req)
}

// postForm sends a form to the hub URL.
func (f *fixture) postForm(form url.Values) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(f.t, req)
}

// postXML sends a fat ping with the given Link headers.
func (f *fixture) postXML(body string, links []string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	for _, l := range links {
		req.Header.Add("Link", l)
	}
	return do(f.t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// lastSeq is the log's last sequence.
func (f *fixture) lastSeq() uint64 {
	f.t.Helper()
	_, last, err := f.log.Bounds(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return last
}

// waitActive waits until the store holds an active subscription.
func (f *fixture) waitActive(topic, cb string) hub.Subscription {
	f.t.Helper()
	var sub hub.Subscription
	testenv.Eventually(f.t, 10*time.Second, func() bool {
		s, err := f.store.Subscription(context.Background(), hub.SubscriptionID(topic, cb))
		sub = s
		return err == nil && s.State == hub.SubActive
	}, "subscription %s -> %s never became active", topic, cb)
	return sub
}

// callback is a subscriber endpoint that echoes challenges and records
// the hub's GET requests.
type callback struct {
	srv  *httptest.Server
	mu   sync.Mutex
	gets []url.Values
}

func newCallback(t *testing.T) *callback {
	c := &callback{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		q := r.URL.Query()
		c.mu.Lock()
		c.gets = append(c.gets, q)
		c.mu.Unlock()
		_, _ = io.WriteString(w, q.Get("hub.challenge"))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *callback) URL(suffix string) string { return c.srv.URL + suffix }

func (c *callback) requests() []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]url.Values(nil), c.gets...)
}

func subscribeForm(topic, cb string) url.Values {
	return url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb}}
}

// notif builds a change-notification payload with one entry per datetime.
func notif(capability, from, until string, datetimes ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:ln rel="up" href="http://example.com/dataset1/capabilitylist.xml"/>
`)
	fmt.Fprintf(&b, `<rs:md capability=%q from=%q until=%q/>`+"\n", capability, from, until)
	for i, dt := range datetimes {
		fmt.Fprintf(&b, `<url><loc>http://example.com/res%d</loc><rs:md change="updated" datetime=%q/></url>`+"\n", i, dt)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

func links(topic, hubURL string) []string {
	return []string{"<" + topic + `>; rel="self"`, "<" + hubURL + `>; rel="hub"`}
}

const (
	t0 = "2013-01-03T00:00:00Z"
	t1 = "2013-01-03T00:10:00Z"
	t2 = "2013-01-03T00:20:00Z"
	t3 = "2013-01-03T00:30:00Z"
)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// stubDeliveries answers as a delivery engine would.
type stubDeliveries struct {
	stats []delivery.SubStats
	err   error // every redrive's
}

func (s stubDeliveries) Stats() []delivery.SubStats { return s.stats }
func (s stubDeliveries) Hosts() []delivery.HostStats {
	return []delivery.HostStats{{Host: "127.0.0.1:2", Limit: 12, InFlight: 3, BaselineMS: 0.4, PausedUntil: time.Now().Add(time.Second)}}
}
func (s stubDeliveries) Redrive(context.Context, string, string) error { return s.err }
