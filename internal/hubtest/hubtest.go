// Package hubtest runs a hub for the tests of the packages that serve it:
// over a real JetStream log and NATS KV store on an embedded NATS server
// (internal/testenv), on a loopback HTTP server, with the requests a
// publisher and a subscriber send and a subscriber's callback endpoint.
package hubtest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

// Backing opens a JetStream log and a NATS KV store on a new embedded NATS
// server; the log is closed when the test ends.
func Backing(tb testing.TB) (*jslog.Log, *kvstore.Store) {
	tb.Helper()
	_, nc := testenv.NATS(tb)
	return BackingOn(tb, nc)
}

// BackingOn is Backing on the connection given.
func BackingOn(tb testing.TB, nc *nats.Conn) (*jslog.Log, *kvstore.Store) {
	tb.Helper()
	ctx := context.Background()
	lg, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = lg.Close() })
	st, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return lg, st
}

// Client is an outbound client that may reach the networks given, each
// an address or CIDR (none: public addresses only).
func Client(tb testing.TB, nets ...string) *http.Client {
	tb.Helper()
	pol, err := netguard.ParsePolicy(nets)
	if err != nil {
		tb.Fatal(err)
	}
	return netguard.NewClient(pol, netguard.Timeouts{})
}

// Fixture is a running hub over Backing's log and store, served on
// loopback.
type Fixture struct {
	T      *testing.T
	Hub    *hub.Hub
	Log    hub.Log
	Store  hub.Store // Backing's, whatever the configuration was edited to
	Server *httptest.Server
	URL    string // the hub URL
	Clock  *testenv.Clock
	Active *Activations
}

// Start runs a hub on a new loopback server with a client that may reach
// loopback, a 1 MiB body limit, the fixture's clock and activations and a
// silent logger; edit (if not nil) changes that configuration, and mount
// (if not nil) adds routes to the hub's mux. The hub runs until the test
// ends, which waits for it. Every answer of the admin API and the hub URL
// is validated against the contract (contract.go).
func Start(t *testing.T, edit func(*hub.Config), mount func(*hub.Hub, *http.ServeMux)) *Fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	lg, st := Backing(t)
	f := &Fixture{T: t, Log: lg, Store: st, Clock: &testenv.Clock{}, Active: &Activations{}}
	mux := http.NewServeMux()
	f.Server = httptest.NewServer(LoadContract(t).Validating(t, mux)) // contract.go
	t.Cleanup(f.Server.Close)
	f.URL = f.Server.URL + "/"
	cfg := hub.Config{
		HubURL:    f.URL,
		Store:     st,
		Log:       lg,
		Client:    Client(t, "127.0.0.0/8"),
		Activator: f.Active,
		MaxBody:   1 << 20,
		Now:       f.Clock.Now,
		Logger:    slog.New(slog.DiscardHandler),
	}
	if edit != nil {
		edit(&cfg)
	}
	h, err := hub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Register(mux)
	if mount != nil {
		mount(h, mux)
	}
	f.Hub = h
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// Channel creates a channel; topic "" makes a hosted one.
func (f *Fixture) Channel(c hub.Channel) hub.Channel {
	f.T.Helper()
	c, err := f.Hub.PutChannel(context.Background(), c)
	if err != nil {
		f.T.Fatal(err)
	}
	return c
}

// PostForm sends a form to the hub URL with the headers given as name,
// value pairs.
func (f *Fixture) PostForm(form url.Values, hdr ...string) (int, string) {
	f.T.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return Do(f.T, req, hdr...)
}

// PostXML sends a fat ping with the given Link headers and the headers
// given as name, value pairs.
func (f *Fixture) PostXML(body string, links []string, hdr ...string) (int, string) {
	f.T.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	for _, l := range links {
		req.Header.Add("Link", l)
	}
	return Do(f.T, req, hdr...)
}

// LastSeq is the log's last sequence.
func (f *Fixture) LastSeq() uint64 {
	f.T.Helper()
	_, last, err := f.Log.Bounds(context.Background())
	if err != nil {
		f.T.Fatal(err)
	}
	return last
}

// WaitActive waits until the store holds an active subscription.
func (f *Fixture) WaitActive(topic, cb string) hub.Subscription {
	f.T.Helper()
	var sub hub.Subscription
	testenv.Eventually(f.T, 10*time.Second, func() bool {
		s, err := f.Store.Subscription(context.Background(), hub.SubscriptionID(topic, cb))
		sub = s
		return err == nil && s.State == hub.SubActive
	}, "subscription %s -> %s never became active", topic, cb)
	return sub
}
