package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// doorsHeading is the section of docs/usage.md whose tables say who may do
// what at each door.
const doorsHeading = "## Who may do what at each door"

// doorTables returns the rows of the tables under doorsHeading in
// docs/usage.md, each as its cells, header and separator rows left out.
func doorTables(t *testing.T) [][]string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n"+doorsHeading+"\n")
	if !ok {
		t.Fatalf("docs/usage.md has no section %q", doorsHeading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| door |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

var (
	statusCell = regexp.MustCompile("`([1-5][0-9][0-9])`")
	cacheCell  = regexp.MustCompile("`Cache-Control: ([^`]*)`")
)

// cellStatus is the status a cell of the table says: its first code.
func cellStatus(t *testing.T, cell string) int {
	t.Helper()
	m := statusCell.FindStringSubmatch(cell)
	if m == nil {
		t.Fatalf("cell %q names no status", cell)
	}
	var n int
	fmt.Sscan(m[1], &n)
	return n
}

// The callers of the channel doors' table, in the order of its columns.
const (
	callerPublic = iota
	callerNoToken
	callerBadToken
	callerNoClaim
	callerClaim
)

// callerNames names the callers in test failures.
var callerNames = []string{"public channel", "no token", "bad token", "token without the claim", "token with the claim"}

// TestDoors_WhoMayDoWhat walks the tables of docs/usage.md "Who may do
// what at each door" against a running hub with a public and a private
// channel of each kind (a Source's topic, a hosted topic): every cell's
// status is what the door answers that caller. /metrics and NATS are
// walked by their own tests (server/metrics, server/nats).
func TestDoors_WhoMayDoWhat(t *testing.T) {
	k := accesstest.NewSecret(t)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s at %s\n", r.URL.Path, time.Now().Format(time.RFC3339Nano))
	}))
	t.Cleanup(src.Close)
	chans := filepath.Join(t.TempDir(), "channels.json")
	defs := fmt.Sprintf(`[{"name": "pub", "topic": %q, "trust": "open"}, {"name": "priv", "topic": %q, "trust": "open", "private": true},
		{"name": "hpub", "hosted": true, "trust": "open"}, {"name": "hpriv", "hosted": true, "trust": "open", "private": true}]`, src.URL+"/pub", src.URL+"/priv")
	if err := os.WriteFile(chans, []byte(defs), 0o644); err != nil {
		t.Fatal(err)
	}
	const admin = "an-admin-token-for-the-doors-test"
	st := servertest.Start(t, nil, func(c *server.Config) {
		c.ChannelsFile, c.SubscriberJWTKey, c.PublisherJWTKey, c.AdminToken = chans, k.Secret, k.Secret, admin
	})
	base := "http://" + st.Addr
	topic := map[string]string{"pub": src.URL + "/pub", "priv": src.URL + "/priv", "hpub": base + wire.TopicPath("hpub"), "hpriv": base + wire.TopicPath("hpriv")}
	exp := time.Now().Add(time.Hour).Unix()
	reader := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{"*"}, nil, exp, 0))
	writer := k.Mint(t, "HS256", nil, accesstest.Mercure(nil, []string{"*"}, exp, 0))
	other := k.Mint(t, "HS256", nil, accesstest.Mercure([]string{src.URL + "/other"}, []string{src.URL + "/other"}, exp, 0))
	cb := hubtest.NewCallback(t)

	// channel and token of each caller, for a door that reads (publish
	// false) or writes
	caller := func(who int, hosted, publish bool) (name, tok string) {
		name = "priv"
		if who == callerPublic {
			name = "pub"
		}
		if hosted {
			name = "h" + name
		}
		switch who {
		case callerBadToken:
			tok = "x.y.z"
		case callerNoClaim:
			tok = other
		case callerClaim:
			tok = reader
			if publish {
				tok = writer
			}
		}
		return name, tok
	}
	n := 0
	fatPing := func(name, tok string) (int, http.Header) {
		n++
		at := func(i int) string {
			return time.Now().UTC().Add(time.Duration(i-1000) * time.Minute).Format(time.RFC3339)
		}
		body := hubtest.Notif("change-notification", at(n), at(n+1), at(n+1))
		req, _ := http.NewRequest(http.MethodPost, st.HubURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", "<"+topic[name]+`>; rel="self", <`+st.HubURL+`>; rel="hub"`)
		return doHeader(t, req, tok)
	}
	form := func(name, tok string, f url.Values) (int, http.Header) {
		req, _ := http.NewRequest(http.MethodPost, st.HubURL, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return doHeader(t, req, tok)
	}
	getting := func(path string, hdr ...string) func(name, tok string) (int, http.Header) {
		return func(name, tok string) (int, http.Header) {
			u := base + strings.ReplaceAll(path, "NAME", name)
			if tok != "" {
				sep := "?"
				if strings.Contains(u, "?") {
					sep = "&"
				}
				u += sep + access.QueryParam + "=" + url.QueryEscape(tok)
			}
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			return doHeader(t, req, "")
		}
	}
	// each door of the channel table: whether it is a hosted topic's,
	// whether it writes, and the request
	doors := map[string]struct {
		hosted, publish bool
		ask             func(name, tok string) (int, http.Header)
	}{
		"hub URL subscribe": {ask: func(name, tok string) (int, http.Header) {
			return form(name, tok, hubtest.SubscribeForm(topic[name], cb.URL("/"+name)))
		}},
		"hub URL fat ping": {publish: true, ask: fatPing},
		"hub URL thin ping": {publish: true, ask: func(name, tok string) (int, http.Header) {
			return form(name, tok, url.Values{"hub.mode": {"publish"}, "hub.url": {topic[name]}})
		}},
		"`/events` `?channels=<name>`": {ask: getting(wire.PathEvents + "?channels=NAME")},
		"`/ws` `?channels=<name>`": {ask: getting(wire.PathWebSocket+"?channels=NAME",
			"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")},
		"pull documents `/channels/<name>/…`": {ask: getting(wire.ChangeListPath("NAME"))},
		"hosted topic `/topics/<name>`":       {hosted: true, ask: getting(wire.TopicPath("NAME"))},
	}
	// what the documents show needs something published first
	for _, name := range []string{"pub", "priv", "hpub", "hpriv"} {
		if s, _ := fatPing(name, writer); s != 200 {
			t.Fatalf("publishing to %s: %d", name, s)
		}
	}

	operator := map[string]func() int{
		"admin API": func() int { return do(t, mustGet(base+"/admin/channels"), "") },
		"dashboard": func() int { return do(t, mustGet(base+"/dashboard/api/config"), "") },
	}
	walked := 0
	for _, row := range doorTables(t) {
		switch len(row) {
		case 7:
			key := row[0] + " " + row[1]
			d, ok := doors[key]
			if !ok {
				t.Errorf("docs/usage.md: door %q is not walked by this test", key)
				continue
			}
			for who := callerPublic; who <= callerClaim; who++ {
				name, tok := caller(who, d.hosted, d.publish)
				want := cellStatus(t, row[2+who])
				got, h := d.ask(name, tok)
				if got != want {
					t.Errorf("%s, %s: %d, the table says %d (%s)", key, callerNames[who], got, want, row[2+who])
				}
				if m := cacheCell.FindStringSubmatch(row[2+who]); m != nil && h.Get("Cache-Control") != m[1] {
					t.Errorf("%s, %s: Cache-Control %q, the table says %q", key, callerNames[who], h.Get("Cache-Control"), m[1])
				}
			}
			walked++
		case 3:
			switch ask, ok := operator[row[0]]; {
			case ok:
				if got, want := ask(), cellStatus(t, row[2]); got != want {
					t.Errorf("%s without credentials: %d, the table says %d", row[0], got, want)
				}
				walked++
			case row[0] == "`/metrics`" || row[0] == "NATS": // their own tests
			default:
				t.Errorf("docs/usage.md: door %q is not walked by this test", row[0])
			}
		default:
			t.Errorf("docs/usage.md: a row of %d cells under %q: %v", len(row), doorsHeading, row)
		}
	}
	if walked != len(doors)+len(operator) {
		t.Errorf("walked %d doors of the table, want %d", walked, len(doors)+len(operator))
	}
	if s := do(t, mustGet(base+"/admin/channels"), admin); s != 200 {
		t.Errorf("admin API with the admin token: %d", s)
	}
}

func mustGet(u string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// do sends req, with tok as its Bearer token when not "", and returns the
// status; a stream that stays open (Server-Sent Events, an upgraded
// WebSocket) is closed once its status is in.
func do(t *testing.T, req *http.Request, tok string) int {
	t.Helper()
	status, _ := doHeader(t, req, tok)
	return status
}

// doHeader is do that returns the answer's header too.
func doHeader(t *testing.T, req *http.Request, tok string) (int, http.Header) {
	t.Helper()
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.Header.Get("Content-Type") != wire.ContentTypeEventStream {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}
