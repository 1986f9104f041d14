package delivery

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
)

// countingStore counts cursor writes.
type countingStore struct {
	Store
	puts atomic.Int64
}

func (s *countingStore) PutCursor(ctx context.Context, id string, c hub.Cursor) error {
	s.puts.Add(1)
	return s.Store.PutCursor(ctx, id, c)
}

// A burst of deliveries stores the cursor once per flush interval and when
// the queue catches up, not once per delivery; the stored cursor ends at the
// last delivered record.
func TestWebhooks_CursorWritesCoalesced(t *testing.T) {
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 200)
	cs := &countingStore{Store: e.store}
	cfg := e.fastConfig()
	cfg.CursorFlush = time.Hour
	w := NewWebhooks(e.log, cs, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	last := seqs[len(seqs)-1]
	testenv.Eventually(t, wait, func() bool { return e.cursor(sub.ID).Seq == last }, "cursor at %d", last)
	if r.count() != 200 {
		t.Fatalf("%d deliveries, want 200", r.count())
	}
	if n := cs.puts.Load(); n > 3 {
		t.Fatalf("%d cursor writes for 200 deliveries in one burst, want at most 3", n)
	}
}
