package publisher

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeHub answers with the statuses in script, then 200, and records every body.
type fakeHub struct {
	mu     sync.Mutex
	script []int
	bodies [][]byte
	auth   []string
}

func (f *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, b)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	status := 200
	if len(f.script) > 0 {
		status, f.script = f.script[0], f.script[1:]
	}
	if status != 200 {
		http.Error(w, "scripted failure "+http.StatusText(status), status)
		return
	}
	w.Header().Set("Rshub-Seq", "7")
	_, _ = io.WriteString(w, "stored seq 7\n")
}

func newTest(t *testing.T, hub http.Handler, store Store) (*Publisher, *time.Time) {
	t.Helper()
	srv := httptest.NewServer(hub)
	t.Cleanup(srv.Close)
	now := t0
	p, err := New(context.Background(), Config{
		Hub: srv.URL + "/", Topic: "http://src/topic", Token: "sekrit-token-0123456789",
		Store: store, Start: t0.Add(-time.Hour), Now: func() time.Time { return now },
		Backoff: Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Attempts: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, &now
}

var oneChange = []Change{{Loc: "http://src/a", Change: changefeed.Created, Length: 3, Hash: "md5:900150983cd24fb0d6963f7d28e17f72"}}

func TestPublish_RetriesSendIdenticalBytes(t *testing.T) {
	hub := &fakeHub{script: []int{503, 502}}
	p, _ := newTest(t, hub, nil)
	res, err := p.Publish(context.Background(), oneChange)
	if err != nil {
		t.Fatal(err)
	}
	if res.Seq != 7 || len(hub.bodies) != 3 {
		t.Fatalf("seq %d after %d attempts, want 7 after 3", res.Seq, len(hub.bodies))
	}
	for _, b := range hub.bodies[1:] {
		if !bytes.Equal(b, hub.bodies[0]) {
			t.Fatal("a retry sent different bytes")
		}
	}
	if hub.auth[0] != "Bearer sekrit-token-0123456789" {
		t.Fatalf("Authorization %q", hub.auth[0])
	}
	if !p.Until().Equal(t0) {
		t.Fatalf("until %v", p.Until())
	}
}

func TestPublish_RefusalSurfacesReasonWithoutRetry(t *testing.T) {
	hub := &fakeHub{script: []int{409}}
	p, _ := newTest(t, hub, nil)
	_, err := p.Publish(context.Background(), oneChange)
	var he *HubError
	if !errors.As(err, &he) || he.Status != 409 || he.Reason != "scripted failure Conflict" {
		t.Fatalf("err = %v, want a HubError 409 with the hub's reason", err)
	}
	if len(hub.bodies) != 1 {
		t.Fatalf("%d attempts, want 1", len(hub.bodies))
	}
	if !p.Until().IsZero() {
		t.Fatal("a refused notification advanced until")
	}
}

func TestPublish_NextFromIsPreviousUntil(t *testing.T) {
	hub := &fakeHub{}
	p, now := newTest(t, hub, nil)
	for range 3 {
		if _, err := p.Publish(context.Background(), oneChange); err != nil {
			t.Fatal(err)
		}
		*now = now.Add(time.Minute)
	}
	var prev time.Time
	for i, b := range hub.bodies {
		doc, err := changefeed.Parse(bytes.NewReader(b), changefeed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && !doc.MD.From.Time.Equal(prev) {
			t.Fatalf("notification %d from %v, previous until %v", i, doc.MD.From.Time, prev)
		}
		prev = doc.MD.Until.Time
	}
}

func TestPublish_PendingSurvivesRestartUnchanged(t *testing.T) {
	store := FileStore{Path: filepath.Join(t.TempDir(), "state.json")}
	hub := &fakeHub{script: []int{500, 500, 500}}
	p, now := newTest(t, hub, store)
	if _, err := p.Publish(context.Background(), oneChange); err == nil {
		t.Fatal("want an error after 3 failed attempts")
	}
	st, err := store.Load(context.Background())
	if err != nil || len(st.Pending) == 0 {
		t.Fatalf("pending not stored: %v", err)
	}
	// a new process: the pending notification goes first, then the new one
	p2, err := New(context.Background(), Config{Hub: p.cfg.Hub, Topic: p.cfg.Topic, Store: store, Now: func() time.Time { return now.Add(time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Publish(context.Background(), oneChange); err != nil {
		t.Fatal(err)
	}
	if len(hub.bodies) != 5 || !bytes.Equal(hub.bodies[3], hub.bodies[0]) {
		t.Fatalf("%d bodies; the resent one must equal the first", len(hub.bodies))
	}
	doc, _ := changefeed.Parse(bytes.NewReader(hub.bodies[4]), changefeed.Options{})
	if !doc.MD.From.Time.Equal(t0) {
		t.Fatalf("second notification from %v, want %v", doc.MD.From.Time, t0)
	}
}

func TestNextWindow(t *testing.T) {
	tests := []struct {
		name      string
		last, now time.Time
		changes   []Change
		wantUntil time.Time
	}{
		{"now", t0, t0.Add(time.Second), nil, t0.Add(time.Second)},
		{"clock went back", t0, t0.Add(-time.Second), nil, t0},
		{"change after now", t0, t0.Add(time.Second), []Change{{DateTime: t0.Add(time.Minute)}}, t0.Add(time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NextWindow(tt.last, tt.now, tt.changes)
			if !w.From.Equal(tt.last) || !w.Until.Equal(tt.wantUntil) {
				t.Fatalf("got %v, want [%v, %v]", w, tt.last, tt.wantUntil)
			}
		})
	}
}

func TestBuild_ClampsDateTimesIntoWindowAndOrder(t *testing.T) {
	w := Window{From: t0, Until: t0.Add(time.Minute)}
	body, err := Build(w, []Change{
		{Loc: "http://s/a", Change: changefeed.Created, DateTime: t0.Add(-time.Hour), Length: -1},
		{Loc: "http://s/b", Change: changefeed.Deleted, DateTime: t0.Add(30 * time.Second), Length: -1},
		{Loc: "http://s/c", Change: changefeed.Updated, DateTime: t0.Add(10 * time.Second), Length: -1},
	}, "http://s/capabilitylist.xml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{t0, t0.Add(30 * time.Second), t0.Add(30 * time.Second)}
	for i, e := range doc.Entries {
		if !e.MD.DateTime.Time.Equal(want[i]) {
			t.Errorf("entry %d datetime %v, want %v", i, e.MD.DateTime.Time, want[i])
		}
	}
	if doc.Link("up") != "http://s/capabilitylist.xml" {
		t.Error("no up link")
	}
	if _, err := Build(w, []Change{{Loc: "http://s/a", Change: "moved"}}, ""); err == nil {
		t.Error("a bad change value was accepted")
	}
}

func TestBackoff_Delay(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 5 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 10: 5 * time.Second} {
		if got := b.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
}
