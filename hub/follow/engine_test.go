package follow

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

// listStore is a store whose channels a test sets.
type listStore struct {
	fakeStore
	mu  sync.Mutex
	chs []hub.Channel
}

func (s *listStore) Channels(context.Context) ([]hub.Channel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hub.Channel(nil), s.chs...), nil
}

// versionedStore is a listStore that tells a channels version, which a
// test moves, and counts its listings.
type versionedStore struct {
	listStore
	ver      string
	listings int
}

func (s *versionedStore) ChannelsVersion(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ver, nil
}

func (s *versionedStore) Channels(ctx context.Context) ([]hub.Channel, error) {
	s.mu.Lock()
	s.listings++
	s.mu.Unlock()
	return s.listStore.Channels(ctx)
}

// set replaces the channels and moves the version, as a channel put does.
func (s *versionedStore) set(ver string, chs ...hub.Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ver, s.chs = ver, chs
}

func (s *versionedStore) listed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listings
}

// A reconcile lists the channels (a copy of every one) only when their
// version moved; one that cannot tell ("") lists every time, a moved
// version starts and stops followers as before, and a Run after a stop
// lists again.
func TestEngine_ReconcileListsOnlyWhenTheChannelsVersionMoved(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1))
	followed := hub.Channel{Name: "c", Follow: r.srv.URL + "/cap.xml", PollInterval: "1h", Validation: hub.ValidationStrict}
	st := &versionedStore{}
	st.set("1", hub.Channel{Name: "plain"})
	e, err := New(Config{Hub: r.hub, Store: st, Client: r.srv.Client(), Reconcile: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	followers := func() int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.followers)
	}
	for range 3 {
		e.reconcile(ctx)
	}
	if n := st.listed(); n != 1 {
		t.Fatalf("3 reconciles at one version listed the channels %d times, want 1", n)
	}
	st.set("2", hub.Channel{Name: "plain"}, followed)
	e.reconcile(ctx)
	e.reconcile(ctx)
	if n, f := st.listed(), followers(); n != 2 || f != 1 {
		t.Fatalf("after the version moved: %d listings, %d followers; want 2, 1", n, f)
	}
	st.set("3", hub.Channel{Name: "plain"})
	e.reconcile(ctx)
	if n, f := st.listed(), followers(); n != 3 || f != 0 {
		t.Fatalf("after the followed channel went: %d listings, %d followers; want 3, 0", n, f)
	}
	st.set("", followed)
	e.reconcile(ctx)
	e.reconcile(ctx)
	if n, f := st.listed(), followers(); n != 5 || f != 1 {
		t.Fatalf("a store that cannot tell its version: %d listings, %d followers; want 5, 1", n, f)
	}
	st.set("4", followed)
	e.reconcile(ctx)
	e.stopAll()
	e.reconcile(ctx)
	if n, f := st.listed(), followers(); n != 7 || f != 1 {
		t.Fatalf("a reconcile after a stop at the same version: %d listings, %d followers; want 7, 1", n, f)
	}
	e.stopAll()
}

// A poll asked for right after the channel was created is made at once,
// not refused until the engine next reads the channels.
func TestEngine_PollNowRightAfterTheChannelIsCreated(t *testing.T) {
	r := newRig(t)
	r.src.set("/cap.xml", capList(r.srv.URL, [2]string{"/cl.xml", "changelist"}))
	r.src.set("/cl.xml", cl(t0, "", "a@"+t1))
	st := &listStore{}
	e, err := New(Config{Hub: r.hub, Store: st, Client: r.srv.Client(), Reconcile: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, 5*time.Second, e.running, "the engine runs")
	if e.PollNow("c") {
		t.Fatal("PollNow of a channel that does not exist reported it followed")
	}
	st.mu.Lock()
	st.chs = []hub.Channel{{Name: "c", Follow: r.srv.URL + "/cap.xml", PollInterval: "1h", Validation: hub.ValidationStrict}}
	st.mu.Unlock()
	if !e.PollNow("c") {
		t.Fatal("PollNow right after the channel was created: not followed")
	}
	testenv.Eventually(t, 5*time.Second, func() bool { return r.hub.published() == "a" }, "the new channel is polled")
}

// running reports whether Run runs.
func (e *Engine) running() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runCtx != nil
}
