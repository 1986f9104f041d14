package pull_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// A channel deleted through this process (Config.LocalChanges moved) is
// gone from every document of its own and from the Source Description at
// once; a process that shares the store but did not delete it (its count
// did not move) drops it within ChannelsTTL.
func TestListing_DeletedChannelGoneAtOnceHereWithinChannelsTTLElsewhere(t *testing.T) {
	e := newEnv(t, pull.Config{})
	a := hub.Channel{Name: "a", Topic: "http://example.com/a/change/", Created: t0}
	b := hub.Channel{Name: "b", Topic: "http://example.com/b/change/", Created: t0}
	lister := &mutableChannels{}
	lister.set(a, b)
	clock := &testenv.Clock{}
	var changes atomic.Uint64
	start := func(local func() uint64) string {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		p, err := pull.New(e.log, lister, pull.Config{HubURL: hubURL, BaseURL: srv.URL, LocalChanges: local})
		if err != nil {
			t.Fatal(err)
		}
		pull.SetClock(p, clock.Now)
		p.Register(mux)
		return srv.URL
	}
	here, elsewhere := start(changes.Load), start(nil)
	docs := func(base string) []string {
		return []string{base + wire.CapabilityListPath("b"), base + wire.FeedPath("b")}
	}
	described := func(base string) bool {
		_, body := e.get(http.MethodGet, base+wire.PathWellKnown)
		return strings.Contains(string(body), wire.CapabilityListPath("b"))
	}
	for _, base := range []string{here, elsewhere} {
		for _, u := range docs(base) {
			if r, _ := e.get(http.MethodGet, u); r.StatusCode != http.StatusOK {
				t.Fatalf("GET %s before the deletion: %s", u, r.Status)
			}
		}
		if !described(base) {
			t.Fatalf("%s: the Source Description does not list b", base)
		}
	}

	lister.set(a)  // b deleted from the store …
	changes.Add(1) // … through the process serving here
	for _, u := range docs(here) {
		if r, _ := e.get(http.MethodGet, u); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s right after the deletion here: %s, want 404", u, r.Status)
		}
	}
	if described(here) {
		t.Error("the Source Description still lists b right after its deletion here")
	}
	clock.Advance(pull.ChannelsTTL) // the documented bound for the other processes
	for _, u := range docs(elsewhere) {
		if r, _ := e.get(http.MethodGet, u); r.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s ChannelsTTL after the deletion elsewhere: %s, want 404", u, r.Status)
		}
	}
	if described(elsewhere) {
		t.Error("the Source Description elsewhere still lists b ChannelsTTL after its deletion")
	}
}
