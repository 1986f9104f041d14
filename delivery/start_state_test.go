package delivery

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
)

// countingKV is the KV store, counting the reads a queue makes by itself.
type countingKV struct {
	*kvstore.Store
	subs, cursors, dead atomic.Int64
}

func (s *countingKV) Subscription(ctx context.Context, id string) (hub.Subscription, error) {
	s.subs.Add(1)
	return s.Store.Subscription(ctx, id)
}

func (s *countingKV) Cursor(ctx context.Context, id string) (hub.Cursor, error) {
	s.cursors.Add(1)
	return s.Store.Cursor(ctx, id)
}

func (s *countingKV) DeadLetters(ctx context.Context, id string) ([]hub.DeadLetter, error) {
	s.dead.Add(1)
	return s.Store.DeadLetters(ctx, id)
}

// An engine starting with many shards reads the subscriptions, their
// cursors and which may hold dead letters in bulk: its queues start from
// the stored cursors, count their dead letters, and read by themselves
// only the dead letters of those that may hold some (one whose only dead
// letter was deleted among them). They deliver from there.
func TestWebhooks_StartReadsStateInBulk(t *testing.T) {
	t.Parallel()
	const n = 20
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	seqs := e.publish(topic, "feed", 0, 2)
	var ids []string
	for i := range n {
		id := e.subscribe(topic, r.url("/cb/"+strconv.Itoa(i)), "").ID
		ids = append(ids, id)
		if i%2 == 0 { // delivered the first already
			if err := e.store.PutCursor(e.ctx(), id, hub.Cursor{Seq: seqs[0]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, id := range ids[:3] {
		d := hub.DeadLetter{ID: "dl-" + strconv.Itoa(i), SubID: id, Seq: seqs[0]}
		if err := e.store.AddDeadLetter(e.ctx(), d); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if err := e.store.DeleteDeadLetter(e.ctx(), id, d.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := &countingKV{Store: e.store}
	w := NewWebhooks(e.log, st, e.fastConfig())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	testenv.Eventually(t, wait, func() bool {
		for _, id := range ids {
			if e.cursor(id).Seq != seqs[1] {
				return false
			}
		}
		return true
	}, "every queue caught up")
	perPath := map[string][]string{}
	for _, d := range r.all() {
		perPath[d.Path] = append(perPath[d.Path], d.Body)
	}
	for i := range n {
		want := []string{"feed-0", "feed-1"}
		if i%2 == 0 {
			want = want[1:]
		}
		if got := perPath["/cb/"+strconv.Itoa(i)]; len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != "feed-1" {
			t.Fatalf("callback %d got %q, want %q", i, got, want)
		}
	}
	for i, id := range ids[:3] {
		if s, _ := statsOf(w, id); s.DeadLetters != 1-i/2 {
			t.Errorf("subscription %d: %d dead letters, want %d", i, s.DeadLetters, 1-i/2)
		}
	}
	if s, c, d := st.subs.Load(), st.cursors.Load(), st.dead.Load(); s != 0 || c != 0 || d != 3 {
		t.Errorf("queues read %d subscriptions, %d cursors, %d dead letter lists by themselves; want 0, 0, 3", s, c, d)
	}
}
