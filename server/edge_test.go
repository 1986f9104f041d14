package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

func TestCheckEdge_RefusesSettingsThatCannotWork(t *testing.T) {
	edge := func(edit func(*Config)) Config {
		c := Defaults()
		c.Upstream, c.UpstreamLeaf, c.LeafPasswordFile = "http://origin.example/", "nats-leaf://origin.example:7422", "leaf-password"
		edit(&c)
		return c
	}
	for name, tc := range map[string]struct {
		cfg  Config
		want string // "" accepted
	}{
		"an edge":                      {edge(func(*Config) {}), ""},
		"an edge on external NATS":     {edge(func(c *Config) { c.NATSURL, c.UpstreamLeaf, c.LeafPasswordFile = "nats://n:4222", "", "" }), ""},
		"an origin":                    {func() Config { c := Defaults(); c.LeafListen, c.LeafPasswordFile = "127.0.0.1:7422", "p"; return c }(), ""},
		"upstream not http":            {edge(func(c *Config) { c.Upstream = "nats://origin" }), "--upstream"},
		"upstream with user info":      {edge(func(c *Config) { c.Upstream = "http://u:p@origin/" }), "--upstream"},
		"no leaf with embedded NATS":   {edge(func(c *Config) { c.UpstreamLeaf = "" }), "--upstream-leaf"},
		"leaf with external NATS":      {edge(func(c *Config) { c.NATSURL = "nats://n:4222" }), "--upstream-leaf applies"},
		"leaf without upstream":        {edge(func(c *Config) { c.Upstream = "" }), "needs --upstream"},
		"leaf not a URL":               {edge(func(c *Config) { c.UpstreamLeaf = "origin:7422" }), "--upstream-leaf must"},
		"leaves of a cluster":          {edge(func(c *Config) { c.UpstreamLeaf = "nats-leaf://a:7422, nats-leaf://b:7422" }), ""},
		"one leaf of several bad":      {edge(func(c *Config) { c.UpstreamLeaf = "nats-leaf://a:7422,b:7422" }), "--upstream-leaf must"},
		"the origin's domain":          {edge(func(c *Config) { c.NATSDomain = DefaultDomain }), "domain of its own"},
		"domain with a dot":            {edge(func(c *Config) { c.NATSDomain = "a.b" }), "--nats-domain"},
		"upstream domain wildcard":     {edge(func(c *Config) { c.UpstreamDomain = ">" }), "--upstream-domain"},
		"channels file at an edge":     {edge(func(c *Config) { c.ChannelsFile = "channels.json" }), "takes its channels from its origin"},
		"redis at an edge":             {edge(func(c *Config) { c.RedisURL = "redis://r:6379" }), "--redis-url"},
		"leaf listener, external NATS": {func() Config { c := Defaults(); c.LeafListen, c.NATSURL = ":7422", "nats://n"; return c }(), "--leaf-listen"},
	} {
		err := tc.cfg.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Check = %v, want %q", name, err, tc.want)
		}
	}
}

// An edge's hub URL sends publishes (fat pings and publish pings) to the
// origin, naming the origin as rel="hub", and answers with the origin's
// answer; subscriptions and everything else stay at the edge; an origin
// that does not answer gets a 503 with Retry-After.
func TestUpstreamIntake_ForwardsPublishesOnly(t *testing.T) {
	var forwarded []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		forwarded = append(forwarded, r.URL.Path+" "+r.Header.Get("Link")+" "+string(b))
		w.Header().Set("Rshub-Seq", "42")
		_, _ = io.WriteString(w, "stored")
	}))
	defer origin.Close()
	local := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { local++; w.WriteHeader(http.StatusAccepted) })
	const edgeURL = "http://edge.example/hub"
	in, err := newUpstreamIntake(edgeURL, origin.URL+"/ohub", 1024, next, hub.Refusals{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(path, ctype, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://edge.example"+path, strings.NewReader(body))
		r.Header.Set("Content-Type", ctype)
		r.Header.Set("Link", `<https://t.example/>; rel="self", <`+edgeURL+`>; rel="hub"`)
		w := httptest.NewRecorder()
		in.ServeHTTP(w, r)
		return w
	}
	w := serve("/hub", "application/xml", "<urlset/>")
	if w.Code != 200 || w.Header().Get("Rshub-Seq") != "42" || len(forwarded) != 1 {
		t.Fatalf("fat ping at the edge: %d %v, forwarded %q", w.Code, w.Header(), forwarded)
	}
	if want := "/ohub " + `<https://t.example/>; rel="self", <` + origin.URL + `/ohub>; rel="hub" <urlset/>`; forwarded[0] != want {
		t.Fatalf("forwarded %q, want %q", forwarded[0], want)
	}
	ping := url.Values{"hub.mode": {"publish"}, "hub.url": {"https://t.example/"}}.Encode()
	if w := serve("/hub", "application/x-www-form-urlencoded", ping); w.Code != 200 || len(forwarded) != 2 || !strings.HasSuffix(forwarded[1], ping) {
		t.Fatalf("publish ping at the edge: %d, forwarded %q", w.Code, forwarded)
	}
	sub := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {"https://t.example/"}}.Encode()
	if w := serve("/hub", "application/x-www-form-urlencoded", sub); w.Code != http.StatusAccepted || local != 1 {
		t.Fatalf("subscription at the edge: %d, local %d", w.Code, local)
	}
	if w := serve("/elsewhere", "application/xml", "<urlset/>"); w.Code != http.StatusAccepted || local != 2 {
		t.Fatalf("another path: %d, local %d", w.Code, local)
	}
	if w := serve("/hub", "application/xml", strings.Repeat("x", 2048)); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over the limit: %d", w.Code)
	}
	if w := serve("/hub", "application/x-www-form-urlencoded", strings.Repeat("x", maxPublishForm+1)); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a form over the limit: %d", w.Code)
	}
	origin.Close()
	w = serve("/hub", "application/xml", "<urlset/>")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "not published") {
		t.Fatalf("origin down: %d %v %q", w.Code, w.Header(), w.Body.String())
	}
}

// An edge sends Mercure publishes (POST /.well-known/mercure) to the
// origin's Mercure face, whatever the origin's hub URL path, and keeps
// Mercure subscriptions (GET) at the edge.
func TestUpstreamIntake_ForwardsMercurePublishes(t *testing.T) {
	var forwarded []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		forwarded = append(forwarded, r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
		_, _ = io.WriteString(w, "urn:id")
	}))
	defer origin.Close()
	local := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { local++; w.WriteHeader(http.StatusAccepted) })
	in, err := newUpstreamIntake("http://edge.example/hub", origin.URL+"/ohub", 1024, next, hub.Refusals{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"topic": {"orders"}, "data": {"x"}}.Encode()
	r := httptest.NewRequest(http.MethodPost, "http://edge.example"+wire.PathMercure, strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	in.ServeHTTP(w, r)
	if want := wire.PathMercure + " Bearer tok " + form; w.Code != 200 || w.Body.String() != "urn:id" || len(forwarded) != 1 || forwarded[0] != want || local != 0 {
		t.Fatalf("Mercure publish at the edge: %d %q, forwarded %q (want %q), local %d", w.Code, w.Body.String(), forwarded, want, local)
	}
	w = httptest.NewRecorder()
	in.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://edge.example"+wire.PathMercure+"?match=orders", nil))
	if w.Code != http.StatusAccepted || local != 1 || len(forwarded) != 1 {
		t.Fatalf("Mercure subscription at the edge: %d, local %d, forwarded %q", w.Code, local, forwarded)
	}
}
