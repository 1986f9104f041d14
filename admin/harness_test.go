package admin_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// The fixture's hub: what hub's own tests use, with the admin API on the
// same mux.

const adminToken = "admin-secret-token" // the fixture's

const openTopic = "http://127.0.0.1:1/dataset1/change/"

// fixture is a running hub with its admin API over a real embedded NATS
// log and KV store, served on loopback.
type fixture struct{ *hubtest.Fixture }

// fixtureOpt edits the hub's and the admin API's configuration.
type fixtureOpt func(*hub.Config, *admin.Config)

func newFixture(t *testing.T, opts ...fixtureOpt) *fixture {
	t.Helper()
	acfg := admin.Config{Token: adminToken, Logger: slog.New(slog.DiscardHandler)}
	edit := func(c *hub.Config) {
		acfg.Store = c.Store // the store itself, whatever an option wraps it in for the hub
		for _, o := range opts {
			o(c, &acfg)
		}
	}
	return &fixture{hubtest.Start(t, edit, func(h *hub.Hub, mux *http.ServeMux) {
		acfg.Hub = h
		api, err := admin.New(acfg)
		if err != nil {
			t.Fatal(err)
		}
		api.Register(mux)
	})}
}

// adminDo sends an admin API request with the fixture's token.
func (f *fixture) adminDo(method, path, body string) (int, string) {
	f.T.Helper()
	req, _ := http.NewRequest(method, f.Server.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return hubtest.Do(f.T, req)
}

const (
	t0 = "2013-01-03T00:00:00Z"
	t1 = "2013-01-03T00:10:00Z"
	t2 = "2013-01-03T00:20:00Z"
	t3 = "2013-01-03T00:30:00Z"
)

// stubDeliveries answers as a delivery engine would.
type stubDeliveries struct {
	stats []delivery.SubStats
	err   error // every redrive's
}

func (s stubDeliveries) Stats() []delivery.SubStats { return s.stats }
func (s stubDeliveries) Hosts() []delivery.HostStats {
	return []delivery.HostStats{{Host: "127.0.0.1:2", Limit: 12, InFlight: 3, BaselineMS: 0.4, PausedUntil: time.Now().Add(time.Second), Rate: 5, RateWaiting: 2}}
}
func (s stubDeliveries) Redrive(context.Context, string, string) error { return s.err }
