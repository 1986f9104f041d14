package hubtest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// errorsOf is a testing.TB that keeps what Errorf reports.
type errorsOf struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (e *errorsOf) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

func (e *errorsOf) Helper() {}

// Every answer on a route of the contract is checked as it is answered:
// a status, a body or a path the contract does not have is reported, an
// empty time and an empty URI too, and an answer that keeps to it is not.
func TestContract_ValidatingReportsEveryAnswerThatBreaksIt(t *testing.T) {
	c := LoadContract(t)
	answer := func(code int, ctype, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			w.WriteHeader(code)
			_, _ = io.WriteString(w, body)
		})
	}
	const state = `{"name":"a","topic":"http://127.0.0.1:1/a","trust":"open","hosted":false,"created":"2026-01-01T00:00:00Z","state":{"topic":%q,"lastSeq":0,"lastHash":"","published":0,"gaps":[],"resets":[]}}`
	for _, tc := range []struct {
		name, method, path string
		h                  http.Handler
		want               string // in the report; "" for none
	}{
		{"status not listed", "GET", "/admin/quarantine", answer(http.StatusTeapot, "text/plain", "no"), "status is not supported"},
		{"path not listed", "GET", "/admin/nothing", answer(http.StatusNotFound, "text/plain", "no"), "not in the contract"},
		{"empty URI", "GET", "/admin/channels/a", answer(200, "application/json", fmt.Sprintf(state, "")), "absolute URI"},
		{"zero time", "GET", "/admin/channels/a", answer(200, "application/json", strings.Replace(fmt.Sprintf(state, "http://127.0.0.1:1/a"), `"lastSeq"`, `"lastFrom":"0001-01-01T00:00:00Z","lastSeq"`, 1)), "empty time"},
		{"keeps to it", "GET", "/admin/channels/a", answer(200, "application/json", fmt.Sprintf(state, "http://127.0.0.1:1/a")), ""},
		{"refused request", "POST", "/", answer(http.StatusBadRequest, "text/plain", "hub.mode missing"), ""},
		{"beside the contract", "GET", "/topic.xml", answer(http.StatusTeapot, "", ""), ""},
	} {
		for _, via := range []string{"handler", "proxy"} {
			t.Run(tc.name+" via "+via, func(t *testing.T) {
				rec := &errorsOf{TB: t}
				var base string
				var srv *httptest.Server
				if via == "handler" {
					srv = httptest.NewServer(c.Validating(rec, tc.h))
					base = srv.URL
				} else {
					srv = httptest.NewServer(tc.h)
					base = strings.TrimSuffix(c.Proxy(rec, srv.URL), "/")
				}
				defer srv.Close()
				req, _ := http.NewRequest(tc.method, base+tc.path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				srv.Close() // the handler has returned: its report is in
				got := strings.Join(rec.errs, "\n")
				switch {
				case tc.want == "" && got != "":
					t.Errorf("reported %s", got)
				case tc.want != "" && !strings.Contains(got, tc.want):
					t.Errorf("report %q, want one naming %q", got, tc.want)
				}
			})
		}
	}
}

// The proxy in front of a hub that is down answers 502 itself: that is
// no answer of the hub's, and it is not reported.
func TestContract_ProxyLeavesItsOwnAnswersAlone(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	rec := &errorsOf{TB: t}
	resp, err := http.Get(LoadContract(t).Proxy(rec, down.URL) + "admin/summary")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || len(rec.errs) > 0 {
		t.Errorf("status %d, reported %q; want 502 and nothing", resp.StatusCode, rec.errs)
	}
}
