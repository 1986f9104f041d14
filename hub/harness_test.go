package hub_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

// fixture is a running hub over a real embedded NATS log and KV store,
// served on loopback.
type fixture struct {
	t      *testing.T
	hub    *hub.Hub
	log    hub.Log
	store  hub.Store
	srv    *httptest.Server
	url    string // hub URL
	clock  *testenv.Clock
	active *activations
}

type activations struct {
	mu          sync.Mutex
	activated   []string
	deactivated []string
}

func (a *activations) Activate(s hub.Subscription) {
	a.mu.Lock()
	a.activated = append(a.activated, s.ID)
	a.mu.Unlock()
}
func (a *activations) Deactivate(id string) {
	a.mu.Lock()
	a.deactivated = append(a.deactivated, id)
	a.mu.Unlock()
}

type fixtureOpt func(*hub.Config)

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
	f := &fixture{t: t, log: lg, store: st, clock: &testenv.Clock{}, active: &activations{}}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL + "/"
	cfg := hub.Config{
		HubURL:    f.url,
		Store:     st,
		Log:       lg,
		Client:    netguard.NewClient(pol, netguard.Timeouts{}),
		Activator: f.active,
		MaxBody:   1 << 20,
		Now:       f.clock.Now,
		Logger:    slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := hub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(mux)
	f.hub = h
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// channel creates a channel; topic "" makes a hosted one.
func (f *fixture) channel(c hub.Channel) hub.Channel {
	f.t.Helper()
	c, err := f.hub.PutChannel(context.Background(), c)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// postForm sends a form to the hub URL.
func (f *fixture) postForm(form url.Values, hdr ...string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(f.t, req)
}

// postXML sends a fat ping with the given Link headers.
func (f *fixture) postXML(body string, links []string, hdr ...string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	for _, l := range links {
		req.Header.Add("Link", l)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
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

// callback is a subscriber endpoint that records verification requests.
type callback struct {
	srv   *httptest.Server
	mu    sync.Mutex
	gets  []url.Values
	raw   []string
	reply func(q url.Values) (int, string) // default: echo the challenge
	count atomic.Int64
}

func newCallback(t *testing.T, path string) *callback {
	c := &callback{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		q := r.URL.Query()
		c.mu.Lock()
		c.gets = append(c.gets, q)
		c.raw = append(c.raw, r.URL.RawQuery)
		reply := c.reply
		c.mu.Unlock()
		c.count.Add(1)
		status, body := http.StatusOK, q.Get("hub.challenge")
		if reply != nil {
			status, body = reply(q)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(c.srv.Close)
	_ = path
	return c
}

func (c *callback) URL(suffix string) string { return c.srv.URL + suffix }

func (c *callback) requests() []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]url.Values(nil), c.gets...)
}

func (c *callback) setReply(fn func(q url.Values) (int, string)) {
	c.mu.Lock()
	c.reply = fn
	c.mu.Unlock()
}

func subscribeForm(topic, cb string, extra ...string) url.Values {
	v := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Add(extra[i], extra[i+1])
	}
	return v
}

// subscription waits until the store holds an active subscription.
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

func mustReq(method, u string) *http.Request {
	r, err := http.NewRequest(method, u, nil)
	if err != nil {
		panic(err)
	}
	return r
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
