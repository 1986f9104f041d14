package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/wire"
)

// openHubEvents opens /events on a whole hub; it returns the response and
// a reader of its events.
func openHubEvents(t *testing.T, ctx context.Context, hubURL string, q url.Values, hdr http.Header) (*http.Response, *wire.EventReader) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(hubURL, "/")+wire.PathEvents+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp, wire.NewEventReader(resp.Body)
}

// TestEventsHub_FilteredReplayResumesWithLastEventID runs a whole hub:
// notifications published over HTTP come out of /events filtered, with ids
// that resume a second stream with Last-Event-ID, and a foreign Origin is
// refused before the stream starts.
func TestEventsHub_FilteredReplayResumesWithLastEventID(t *testing.T) {
	h := startDashHub(t)
	topic := h.url + "topics/demo"
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	for i, loc := range []string{"https://example.org/a/1", "https://example.org/b/2", "https://example.org/a/3"} {
		h.publish(t, topic, t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i+1)*time.Minute), dashEntry{loc, "updated"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := url.Values{wire.ParamChannels: {"demo"}, wire.ParamSince: {"0"}, wire.ParamPrefix: {"https://example.org/a/"}}

	resp, _ := openHubEvents(t, ctx, h.url, q, http.Header{"Origin": {"http://evil.example"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %d, want 403", resp.StatusCode)
	}

	read := func(r *wire.EventReader, n int) []wire.Notification {
		t.Helper()
		var out []wire.Notification
		for len(out) < n {
			ev, err := r.Next()
			if err != nil {
				t.Fatalf("after %d notifications: %v", len(out), err)
			}
			if ev.Type != wire.EventNotification {
				continue
			}
			var m wire.Notification
			if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
				t.Fatal(err)
			}
			if c, err := wire.ParseCursor(ev.ID); err != nil || c.Seq != m.Seq || c.Epoch == "" || ev.ID != m.ID {
				t.Errorf("event id %q for seq %d", ev.ID, m.Seq)
			}
			out = append(out, m)
		}
		return out
	}
	resp, r := openHubEvents(t, ctx, h.url, q, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != wire.ContentTypeEventStream {
		t.Fatalf("open: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	got := read(r, 3)
	for i, want := range [][]string{{"https://example.org/a/1"}, {}, {"https://example.org/a/3"}} {
		var locs []string
		for _, e := range got[i].Entries {
			locs = append(locs, e.Loc)
		}
		if strings.Join(locs, " ") != strings.Join(want, " ") || got[i].Until == "" {
			t.Errorf("notification %d: entries %v until %q, want %v with its until", got[i].Seq, locs, got[i].Until, want)
		}
	}
	_, r2 := openHubEvents(t, ctx, h.url, q, http.Header{wire.HeaderLastEventID: {strconv.FormatUint(got[1].Seq, 10)}})
	if again := read(r2, 1); again[0].Seq != got[2].Seq {
		t.Fatalf("resumed at %d, want %d", again[0].Seq, got[2].Seq)
	}
}
