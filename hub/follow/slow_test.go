package follow

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// slowSource serves documents, but the one at slowPath, while mode says
// so, answers only when the request ends (a Source that answers after the
// hub stopped waiting), or sends half its body and then nothing more.
type slowSource struct {
	mu       sync.Mutex
	docs     map[string]string
	slowPath string
	mode     string // "", "hang", "trickle"
}

func (s *slowSource) set(path, body string) {
	s.mu.Lock()
	s.docs[path] = body
	s.mu.Unlock()
}

func (s *slowSource) setMode(m string) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

func (s *slowSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, ok := s.docs[r.URL.Path]
	mode := ""
	if r.URL.Path == s.slowPath {
		mode = s.mode
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch mode {
	case "hang":
		<-r.Context().Done()
		return
	case "trickle":
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write([]byte(body[:len(body)/2]))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	_, _ = w.Write([]byte(body))
}

// A Source that answers after the fetch bound, or trickles its body past
// it, fails the poll with an error that says so (lastError, the timeouts
// count, the bound in the status), and nothing of the half-read list is
// published; once the Source answers again, every change is published
// once, in order.
func TestFollower_ASlowSourceIsBoundedAndNoHalfReadListIsPublished(t *testing.T) {
	src := &slowSource{docs: map[string]string{}, slowPath: "/1.xml"}
	srv := httptest.NewServer(src)
	t.Cleanup(srv.Close)
	h := &fakeHub{}
	e, err := New(Config{Hub: h, Store: fakeStore{}, Client: srv.Client(), Logger: slog.New(slog.DiscardHandler),
		Rand: func() float64 { return 0 }, FetchTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	src.set("/idx.xml", index(srv.URL, [3]string{"/1.xml", t0, ""}))
	src.set("/1.xml", cl(t0, "", "a@"+t1))
	f := newFollower(e, hub.Channel{Name: "c", Follow: srv.URL + "/idx.xml", PollInterval: "1s", Validation: hub.ValidationStrict})
	ctx := context.Background()
	if _, _ = f.turn(ctx, testTiming); f.status().LastError != "" {
		t.Fatalf("first poll: %s", f.status().LastError)
	}
	src.set("/1.xml", cl(t0, "", "a@"+t1, "b@"+t2, "c@"+t3))
	for _, tc := range []struct{ mode, says string }{
		{"trickle", "did not arrive whole within 300ms"},
		{"hang", "no answer within 300ms"},
	} {
		src.setMode(tc.mode)
		err := f.poll(ctx)
		var te *TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: poll error %v, want a TimeoutError", tc.mode, err)
		}
		f.turn(ctx, testTiming)
		if st := f.status(); !strings.Contains(st.LastError, tc.says) || !strings.Contains(st.LastError, "/1.xml") {
			t.Errorf("%s: lastError %q, want it to say %q", tc.mode, st.LastError, tc.says)
		}
		if got := h.published(); got != "a" {
			t.Fatalf("%s: published %q, want a only: nothing of a half-read list", tc.mode, got)
		}
	}
	st := f.status()
	if st.Timeouts != 4 || st.FetchTimeout != "300ms" {
		t.Errorf("status: %d timeouts, bound %q; want 4, 300ms", st.Timeouts, st.FetchTimeout)
	}
	src.setMode("")
	f.turn(ctx, testTiming)
	if got := h.published(); got != "a b c" || f.status().LastError != "" {
		t.Errorf("after the Source answers again: published %q, lastError %q; want a b c", got, f.status().LastError)
	}
}
