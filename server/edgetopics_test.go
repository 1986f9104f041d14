package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// mirrorChannels is the edge's mirror of the origin's channels as
// originTopics reads it: what the origin (the test's HTTP server) created
// shows up in it.
type mirrorChannels struct {
	mu  sync.Mutex
	chs map[string]hub.Channel
}

func (m *mirrorChannels) Channel(_ context.Context, topic string) (hub.Channel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.chs[topic]; ok {
		return ch, nil
	}
	return hub.Channel{}, hub.ErrNotFound
}

func (m *mirrorChannels) put(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chs[topic] = hub.Channel{Topic: topic, Trust: hub.TrustOpen}
}

// originAnswering is an origin's hub URL answering every request with
// status; a 2xx or 502 answer creates the pinged topic's channel in the
// mirror, after a moment (the mirror's lag). It records the forms it got.
func originAnswering(t *testing.T, status int, mirror *mirrorChannels) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var forms []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("the origin got no form: %v", err)
		}
		mu.Lock()
		forms = append(forms, r.Method+" "+r.Header.Get("Content-Type")+" "+r.PostForm.Encode())
		mu.Unlock()
		if status/100 == 2 || status == http.StatusBadGateway {
			topic := r.PostForm.Get("hub.url")
			time.AfterFunc(200*time.Millisecond, func() { mirror.put(topic) })
		}
		http.Error(w, "origin says "+http.StatusText(status), status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), forms...)
	}
}

func TestOriginTopics_ThinPingCreatesAndWaitsForTheMirror(t *testing.T) {
	const topic = "https://example.org/fresh"
	for _, status := range []int{http.StatusOK, http.StatusBadGateway} { // 502: the origin's fetch failed after it created the channel
		mirror := &mirrorChannels{chs: map[string]hub.Channel{}}
		origin, forms := originAnswering(t, status, mirror)
		if err := newOriginTopics(origin, mirror).Open(context.Background(), topic); err != nil {
			t.Fatalf("origin answering %d: %v", status, err)
		}
		if _, err := mirror.Channel(context.Background(), topic); err != nil {
			t.Fatalf("origin answering %d: Open returned before the mirror had the channel", status)
		}
		want := "POST application/x-www-form-urlencoded hub.mode=publish&hub.url=https%3A%2F%2Fexample.org%2Ffresh"
		if got := forms(); len(got) != 1 || got[0] != want {
			t.Fatalf("origin answering %d got %q, want one %q", status, got, want)
		}
	}
}

func TestOriginTopics_RefusedByTheOriginIsNotFound(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusBadRequest} {
		mirror := &mirrorChannels{chs: map[string]hub.Channel{}}
		origin, _ := originAnswering(t, status, mirror)
		err := newOriginTopics(origin, mirror).Open(context.Background(), "https://example.org/closed")
		if !errors.Is(err, hub.ErrNotFound) {
			t.Fatalf("origin answering %d: %v, want ErrNotFound", status, err)
		}
	}
}

func TestOriginTopics_OriginUnavailableIsAnError(t *testing.T) {
	mirror := &mirrorChannels{chs: map[string]hub.Channel{}}
	origin, _ := originAnswering(t, http.StatusServiceUnavailable, mirror)
	err := newOriginTopics(origin, mirror).Open(context.Background(), "https://example.org/x")
	if err == nil || errors.Is(err, hub.ErrNotFound) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("origin answering 503: %v, want an error naming it", err)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if err := newOriginTopics(gone.URL+"/", mirror).Open(context.Background(), "https://example.org/x"); err == nil || errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("origin not listening: %v, want an error", err)
	}
}

// A channel the origin created that never reaches the mirror (the leaf
// link down) ends the wait, bounded, with an error saying so.
func TestOriginTopics_MirrorWithoutTheChannelEndsTheWait(t *testing.T) {
	mirror := &mirrorChannels{chs: map[string]hub.Channel{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	o := newOriginTopics(srv.URL+"/", mirror)
	o.wait = 300 * time.Millisecond
	err := o.Open(context.Background(), "https://example.org/lost")
	if err == nil || errors.Is(err, hub.ErrNotFound) || !strings.Contains(err.Error(), "mirror") {
		t.Fatalf("Open = %v, want an error about the mirror", err)
	}
}
