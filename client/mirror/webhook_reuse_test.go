package mirror_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
)

// runWebhook runs a mirror of dir on ln until the returned stop is called,
// and returns the mirror and its warnings, once it has subscribed.
func runWebhook(t *testing.T, hubURL, dir string, ln net.Listener, unsubscribe bool) (m *mirror.Mirror, warnings func() []string, stop func()) {
	t.Helper()
	var mu sync.Mutex
	var warned []string
	subscribed := make(chan struct{}, 1)
	m, err := mirror.Open(mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", Events: func(e mirror.Event) {
		switch {
		case e.Kind == mirror.EventWarning:
			mu.Lock()
			warned = append(warned, e.Message)
			mu.Unlock()
		case e.Kind == mirror.EventInfo && strings.HasPrefix(e.Message, "subscribed "):
			select {
			case subscribed <- struct{}{}:
			default:
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.RunWebhook(ctx, mirror.WebhookConfig{Listener: ln, UnsubscribeOnExit: unsubscribe}) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatalf("RunWebhook on %s ended before subscribing: %v", ln.Addr(), err)
	case <-time.After(time.Minute):
		t.Fatalf("RunWebhook on %s did not subscribe within a minute", ln.Addr())
	}
	return m, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), warned...) }, stop
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// The subscription kept in the state file is renewed only by a run on the
// callback it was made for: a run on another callback address subscribes
// anew, with a new id, and says why; a run on the same one reuses it. With
// UnsubscribeOnExit the state keeps none.
func TestRunWebhook_StateSubscriptionOfAnotherCallbackIsNotReused(t *testing.T) {
	hubURL := startHub(t)
	dir := filepath.Join(t.TempDir(), "mirror")
	subscribed := func(m *mirror.Mirror, ln net.Listener) string {
		t.Helper()
		s := m.State().Subscription
		if s == nil || !strings.Contains(s.Callback, "//"+ln.Addr().String()+"/") {
			t.Fatalf("the state file's subscription is %+v, want one on %s", s, ln.Addr())
		}
		return s.ID
	}

	ln1 := listen(t, "127.0.0.1:0")
	addr1 := ln1.Addr().String()
	m, _, stop := runWebhook(t, hubURL, dir, ln1, false)
	first := subscribed(m, ln1)
	stop()

	ln2 := listen(t, "127.0.0.1:0")
	m, warnings, stop := runWebhook(t, hubURL, dir, ln2, false)
	second := subscribed(m, ln2)
	if second == first {
		t.Fatalf("a run on %s reused the subscription id %s made for %s", ln2.Addr(), first, addr1)
	}
	stop()
	if w := strings.Join(warnings(), "\n"); !strings.Contains(w, "subscribing anew") || !strings.Contains(w, addr1) {
		t.Errorf("the run on another callback warned %q, want it to say it subscribes anew and name %s", w, addr1)
	}

	ln3 := listen(t, ln2.Addr().String()) // the same callback as the second run
	m, warnings, stop = runWebhook(t, hubURL, dir, ln3, true)
	if third := subscribed(m, ln3); third != second {
		t.Errorf("a run on the same callback subscribed as %s, want the kept subscription %s", third, second)
	}
	stop()
	if st := m.State(); st.Subscription != nil {
		t.Errorf("UnsubscribeOnExit left subscription %s in the state file", st.Subscription.ID)
	}
	if w := warnings(); len(w) != 0 {
		t.Errorf("a run on the same callback warned %q", w)
	}
}
