package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// A topic is a URL, not bytes (WebSub §5.1.1): on an --open-topics hub, a
// subscription to …/topic/%7Ealice receives what is published to
// …/topic/~alice, at its callback spelled in either way.
func TestTopics_SubscribeEncodedPublishDecodedDelivers(t *testing.T) {
	var mu sync.Mutex
	var verified, delivered []string
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodGet {
			verified = append(verified, r.URL.Path)
			_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		b, _ := io.ReadAll(r.Body)
		delivered = append(delivered, r.URL.Path+" "+string(b))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(cb.Close)
	st := servertest.Start(t, nil, func(c *server.Config) { c.OpenTopics = true })
	post := func(body, contentType string, hdr ...string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, st.HubURL, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		return hubtest.Do(t, req, hdr...)
	}
	if s, b := post(hubtest.SubscribeForm("http://127.0.0.1:1/topic/%7Ealice", cb.URL+"/k1%7Ex").Encode(), "application/x-www-form-urlencoded"); s != 202 {
		t.Fatalf("subscribe: %d %q", s, b)
	}
	testenv.Eventually(t, 60*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(verified) == 1 }, "no verification of intent")
	now := time.Now().UTC().Truncate(time.Second)
	note := hubtest.Notif("change-notification", now.Add(-time.Minute).Format(time.RFC3339), now.Format(time.RFC3339), now.Format(time.RFC3339))
	if s, b := post(note, "application/xml", "Link", `<http://127.0.0.1:1/topic/~alice>; rel="self", <`+st.HubURL+`>; rel="hub"`); s != 200 {
		t.Fatalf("publish to ~alice: %d %q", s, b)
	}
	testenv.Eventually(t, 60*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return len(delivered) == 1 }, "nothing delivered")
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(delivered[0], "/k1~x ") || !strings.Contains(delivered[0], "http://example.com/res0") {
		t.Fatalf("delivered %q, want the notification at /k1~x", delivered[0])
	}
}
