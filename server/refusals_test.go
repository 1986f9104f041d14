package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// The doors outside the hub URL (live sessions, pull-mode documents)
// refuse through the hub's one refusal table: the reason's status and a
// count by reason in rshub_publish_rejects_total, as the hub URL's own.
func TestRefusals_EveryDoorAnswersAndCountsThroughTheTable(t *testing.T) {
	st := servertest.Start(t, nil)
	base := "http://" + st.Addr
	for _, c := range []struct {
		name, path, origin string
		status             int
		reason             string
	}{
		{"events from a foreign origin", "/events?channels=demo", "http://elsewhere.example", http.StatusForbidden, "origin"},
		{"events with a bad since", "/events?channels=demo&since=zz", "", http.StatusBadRequest, "session"},
		{"a Change List that does not exist", wire.ChangeListFilePath("demo", 987654), "", http.StatusNotFound, "no_document"},
		{"a channel that does not exist", wire.CapabilityListPath("nosuch"), "", http.StatusNotFound, "unknown_channel"},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+c.path, nil)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s: %d %s %q, want %d in plain text", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status)
		}
		if got := rejects(t, base, c.reason); got < 1 {
			t.Errorf("%s: rshub_publish_rejects_total{reason=%q} = %v, want counted", c.name, c.reason, got)
		}
	}
}

// rejects reads rshub_publish_rejects_total{reason} from /metrics (0 when
// the series is absent).
func rejects(t *testing.T, base, reason string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, `rshub_publish_rejects_total{reason="`+reason+`"} `) {
			var v float64
			if _, err := fmt.Sscan(strings.TrimPrefix(line, `rshub_publish_rejects_total{reason="`+reason+`"} `), &v); err == nil {
				return v
			}
		}
	}
	return 0
}
