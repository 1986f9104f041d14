package live_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rshub/rshub/internal/edgetest"
	"github.com/rshub/rshub/wire"
)

// /events and /ws refuse every hostile filter with 400 and the reason
// (issue 23 item 7): an empty prefix or change is not "no filter".
func TestSessions_HostileFiltersRefused(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	for _, c := range edgetest.Filters() {
		v := url.Values{wire.ParamChannels: {"a"}}
		if c.Prefix != nil {
			v[wire.ParamPrefix] = c.Prefix
		}
		if c.Change != nil {
			v[wire.ParamChange] = c.Change
		}
		if _, err := e.openEvents("", v.Encode(), nil, 0); err == nil || !strings.HasPrefix(err.Error(), "status 400") {
			t.Errorf("/events, %s: %v, want status 400", c.Why, err)
		}
		conn, resp, err := e.dial(v.Encode(), nil, 0)
		if err == nil {
			_ = conn.Close()
		}
		if statusOf(resp) != http.StatusBadRequest {
			t.Errorf("/ws, %s: status %d (%v), want 400", c.Why, statusOf(resp), err)
		}
	}
}
