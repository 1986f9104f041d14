package hub_test

import (
	"net/http"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// fixture is a running hub over a real embedded NATS log and KV store,
// served on loopback.
type fixture struct{ *hubtest.Fixture }

type fixtureOpt func(*hub.Config)

func newFixture(t *testing.T, opts ...fixtureOpt) *fixture {
	t.Helper()
	return &fixture{hubtest.Start(t, func(c *hub.Config) {
		for _, o := range opts {
			o(c)
		}
	}, nil)}
}

func mustReq(method, u string) *http.Request {
	r, err := http.NewRequest(method, u, nil)
	if err != nil {
		panic(err)
	}
	return r
}
