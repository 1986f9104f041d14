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
