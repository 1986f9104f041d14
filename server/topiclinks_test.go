package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// TestHostedTopic_EveryAdvertisedLinkAnswers200: every link the Link
// header of a hosted topic advertises (self, hub, resourcesync,
// describedby, the Atom feed, the Mercure face), on HEAD and GET, and every link its
// framework topic advertises, answers 200 on the same hub: no topic
// advertises a document nobody serves.
func TestHostedTopic_EveryAdvertisedLinkAnswers200(t *testing.T) {
	desc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "dataset description") }))
	defer desc.Close()
	chans := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(chans, []byte(`[{"name": "described", "hosted": true, "trust": "open", "describedBy": "`+desc.URL+`/void.ttl"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, func(c *server.Config) { c.ChannelsFile = chans })
	base := "http://" + st.Addr
	var topics []string
	for _, name := range []string{"demo", "described"} {
		topic := base + wire.TopicPath(name)
		publish(t, st.HubURL, topic)
		topics = append(topics, topic, base+wire.FrameworkTopicPath(name))
	}
	for _, topic := range topics {
		// the topic answers 200 once it has a notification (the framework
		// topic's first comes from pull mode, shortly after the channel)
		testenv.Eventually(t, 20*time.Second, func() bool { return status(t, http.MethodGet, topic) == http.StatusOK }, "GET %s: 200", topic)
		for _, m := range []string{http.MethodHead, http.MethodGet} {
			req, _ := http.NewRequest(m, topic, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			links := wire.ParseLinks(resp.Header.Values("Link"))
			rels := map[string]bool{}
			for _, l := range links {
				for _, r := range l.Rels {
					rels[r] = true
				}
				href := l.Href
				if l.Has(wire.RelMercure) { // the Mercure face answers a subscription to the topic
					href += "?match=" + url.QueryEscape(topic)
				}
				if got := status(t, http.MethodGet, href); got != http.StatusOK {
					t.Errorf("%s %s advertises <%s>; rel=%v, which answers %d", m, topic, l.Href, l.Rels, got)
				}
			}
			for _, r := range []string{wire.RelSelf, wire.RelHub, wire.RelResourceSync, wire.RelMercure} {
				if !rels[r] {
					t.Errorf("%s %s: no rel=%s in %q", m, topic, r, resp.Header.Values("Link"))
				}
			}
			framework := strings.HasSuffix(topic, wire.FrameworkSuffix)
			if !framework && !rels[wire.RelAlternate] {
				t.Errorf("%s %s: the channel's Atom feed is not advertised", m, topic)
			}
		}
	}
}

// publish posts one change notification to an open topic.
func publish(t *testing.T, hubURL, topic string) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	body := fmt.Sprintf(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.com/r1</loc><rs:md change="created" datetime="%s"/></url>
</urlset>`, now.Add(-time.Second).Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339))
	req, _ := http.NewRequest(http.MethodPost, hubURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", "<"+topic+`>; rel="self", <`+hubURL+`>; rel="hub"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("publish to %s: %d %s", topic, resp.StatusCode, b)
	}
}

func status(t *testing.T, method, u string) int {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
