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

// in is f for subtest t: the same hub, log and store, failing t. Subtests
// that each bring their own origin and channel share one fixture this way
// instead of each starting a NATS server and a hub.
func (f *fixture) in(t *testing.T) *fixture {
	g := *f.Fixture
	g.T = t
	return &fixture{&g}
}

func mustReq(method, u string) *http.Request {
	r, err := http.NewRequest(method, u, nil)
	if err != nil {
		panic(err)
	}
	return r
}
