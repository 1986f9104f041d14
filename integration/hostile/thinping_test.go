package hostile

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
)

// changeList is a Change List from a Source, with hooks to break it.
func changeList(from string, locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="changelist"` + from + `/>
`)
	for i, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc><rs:md change=\"updated\" datetime=\"2024-01-01T00:00:%02dZ\"/></url>\n", l, i+1)
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// logCount reads how many published records the log holds, through NATS.
func (tg *target) logCount() uint64 {
	tg.t.Helper()
	n, _ := tg.published(nil)
	return uint64(n)
}

// A thin ping whose topic serves a document that fails validation is
// refused with 502 naming the problem, and nothing is stored; a valid one
// after it is relayed.
func TestHostile_ThinPingRelaysOnlyWhatItValidated(t *testing.T) {
	tg := startTarget(t)
	var mu sync.Mutex
	var doc, contentType string
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(doc))
	}))
	t.Cleanup(src.Close)
	serve := func(ct, body string) {
		mu.Lock()
		doc, contentType = body, ct
		mu.Unlock()
	}
	const from = ` from="2024-01-01T00:00:00Z"`
	good := changeList(from, "http://example.org/a", "http://example.org/b")
	cases := []struct{ name, ct, body string }{
		{"changelist-without-from", "application/xml", changeList("", "http://example.org/a")},
		{"relative-loc", "application/xml", changeList(from, "../../etc/passwd")},
		{"loc-not-a-uri", "application/xml", changeList(from, "http://example.org/?x=&lt;y&gt;", "http://example.org/del]]&gt;x")},
		{"doctype", "application/xml", `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY e "x">]>` + strings.TrimPrefix(good, `<?xml version="1.0" encoding="UTF-8"?>`)},
		{"plain-sitemap", "application/xml", strings.Replace(changeList(from, "http://example.org/a"), `<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>`, "", 1)},
		{"latin1-label", "application/xml; charset=iso-8859-1", good},
		{"truncated", "application/xml", good[:len(good)/2]},
		{"future", "application/xml", strings.Replace(good, "2024-01-01T00:00:02Z", "9999-01-01T00:00:00Z", 1)},
	}
	topic := src.URL + "/changelist.xml"
	for _, c := range cases {
		before := tg.logCount()
		serve(c.ct, c.body)
		tg.check("thin", c.name, tg.form("hub.mode", "publish", "hub.url", topic), http.StatusBadGateway)
		if after := tg.logCount(); after != before {
			t.Errorf("thin/%s: the log grew from %d to %d records on a refused ping", c.name, before, after)
		}
	}
	before := tg.logCount()
	serve("application/xml", good)
	a := tg.check("thin", "valid", tg.form("hub.mode", "publish", "hub.url", topic), http.StatusOK)
	if after := tg.logCount(); after <= before {
		t.Errorf("a valid Change List was not relayed: %d records before, %d after (%s)", before, after, a.body)
	}
}

// The same hostile keys against a hub whose state is in Redis.
func TestHostile_KeysWithRedisState(t *testing.T) {
	redisURL := testenv.Redis(t)
	tg := startTarget(t, func(c *server.Config) { c.RedisURL = redisURL })
	tg.publishValid("start")
	hostileKeys(tg)
	tg.publishValid("hostile keys")
	tg.verifyLog()
	t.Logf("%d hostile key cases against Redis state", tg.cases["keys"])
}
