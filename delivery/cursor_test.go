package delivery

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/loophealth"
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

// A burst of deliveries stores the cursor once per flush interval, not
// once per delivery; a graceful stop stores the last delivered record.
func TestWebhooks_CursorWritesCoalesced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	seqs := e.publish(topic, "feed", 0, 200)
	cs := &countingStore{Store: e.store}
	cfg := e.fastConfig()
	cfg.CursorFlush, cfg.ClaimTTL = time.Hour, time.Hour // no store write, no lease a busy machine lets lapse (a stop stores cursors)
	w := NewWebhooks(e.log, cs, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	testenv.Eventually(t, wait, func() bool { return r.count() == 200 }, "200 deliveries")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c, last := e.cursor(sub.ID), seqs[len(seqs)-1]; c.Seq != last {
		t.Fatalf("cursor at %d after a graceful stop, want %d", c.Seq, last)
	}
	if n := cs.puts.Load(); n != 1 {
		t.Fatalf("%d cursor writes for 200 deliveries in one burst, want 1", n)
	}
}

// In the fan-out pattern every queue catches up after every notification;
// its cursor is still written once per flush interval, with the other
// queues' cursors, not once per delivery. A graceful stop stores every
// cursor reached, and a queue restarted meanwhile resumes from the cursor
// handed over, not the older one stored: nothing is delivered twice.
func TestWebhooks_FanOutCursorWritesBatched(t *testing.T) {
	t.Parallel()
	const subs, notes = 20, 10
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	var ids []string
	for i := range subs {
		ids = append(ids, e.subscribe(topic, r.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	cs := &countingStore{Store: e.store}
	cfg := e.fastConfig()
	cfg.CursorFlush, cfg.ClaimTTL = time.Hour, time.Hour // no store write, no lease a busy machine lets lapse (a stop stores cursors)
	w := NewWebhooks(e.log, cs, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer cancel()
	var last uint64
	for i := range notes {
		last = e.publish(topic, "feed", i, 1)[0]
		testenv.Eventually(t, wait, func() bool { return r.count() == (i+1)*subs }, "notification %d delivered to all", i)
		if i == notes/2 { // a queue stopped and started again resumes where it was
			sub, _ := e.store.Subscription(e.ctx(), ids[0])
			w.Deactivate(ids[0])
			w.Activate(sub)
		}
	}
	if n := cs.puts.Load(); n != 0 {
		t.Fatalf("%d cursor writes within the flush interval, want 0 (one per delivery before batching)", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if c := e.cursor(id); c.Seq != last {
			t.Fatalf("cursor of %s = %d after a graceful stop, want %d", id, c.Seq, last)
		}
	}
	if n := cs.puts.Load(); n != subs {
		t.Fatalf("%d cursor writes at stop, want %d (one per subscription)", n, subs)
	}
	if got := r.count(); got != subs*notes {
		t.Fatalf("%d deliveries, want %d: some were delivered twice", got, subs*notes)
	}
}

// A queue restarted while the store is down resumes from the cursor its
// predecessor handed over once the store answers again: it neither stalls
// nor delivers again.
func TestWebhooks_RestartDuringStoreOutageResumesFromHandedCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	sub := e.subscribe(topic, r.url("/cb"), "")
	o := &outage{}
	cfg := e.fastConfig()
	cfg.CursorFlush, cfg.ClaimTTL = time.Hour, time.Hour // no store write, no lease lost meanwhile
	w := NewWebhooks(e.log, &flakyStore{s: e.store, o: o}, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.publish(topic, "feed", 0, 1)
	testenv.Eventually(t, wait, func() bool { return r.count() == 1 }, "first notification delivered")

	o.Set(true)
	w.Deactivate(sub.ID)
	w.Activate(sub)
	testenv.Eventually(t, wait, func() bool { ok, _, _ := w.Health(); return !ok }, "the restarted queue meets the outage")
	o.Set(false)
	e.publish(topic, "feed", 1, 1)
	testenv.Eventually(t, wait, func() bool { return r.count() >= 2 }, "second notification delivered after the outage")
	if got := r.bodies(); len(got) != 2 || got[0] != "feed-0" || got[1] != "feed-1" {
		t.Fatalf("bodies %q, want [feed-0 feed-1]", got)
	}
}

// batchStore stores cursors in batches through the store's PutCursors,
// refusing the cursors of refuse in its first batches, and counts both
// kinds of cursor write.
type batchStore struct {
	Store
	kv             *kvstore.Store
	puts, batches  atomic.Int64
	refuse         string
	refusals, left atomic.Int64
}

func (s *batchStore) PutCursor(ctx context.Context, id string, c hub.Cursor) error {
	s.puts.Add(1)
	return s.Store.PutCursor(ctx, id, c)
}

func (s *batchStore) PutCursors(ctx context.Context, cs map[string]hub.Cursor) map[string]error {
	s.batches.Add(1)
	var refused map[string]error
	if _, ok := cs[s.refuse]; ok && s.left.Add(-1) >= 0 {
		cs = maps.Clone(cs)
		delete(cs, s.refuse)
		refused = map[string]error{s.refuse: errors.New("refused")}
		s.refusals.Add(1)
	}
	failed := s.kv.PutCursors(ctx, cs)
	if refused == nil {
		return failed
	}
	maps.Copy(refused, failed)
	return refused
}

// With a store that stores cursors in batches, a flush stores every
// queue's cursor in one call instead of one write per subscription; a
// cursor the store refused stays pending and is stored by a later round,
// the others are not written again.
func TestWebhooks_CursorFlushUsesBatches(t *testing.T) {
	t.Parallel()
	const subs, notes = 20, 5
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, nil)
	var ids []string
	for i := range subs {
		ids = append(ids, e.subscribe(topic, r.url("/cb/"+strconv.Itoa(i)), "").ID)
	}
	bs := &batchStore{Store: e.store, kv: e.store, refuse: ids[3]}
	bs.left.Store(2)
	cfg := e.fastConfig()
	cfg.CursorFlush = 20 * time.Millisecond
	w := NewWebhooks(e.log, bs, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	seqs := e.publish(topic, "feed", 0, notes)
	last := seqs[len(seqs)-1]
	testenv.Eventually(t, wait, func() bool {
		for _, id := range ids {
			if e.cursor(id).Seq != last {
				return false
			}
		}
		return true
	}, "every cursor stored at %d", last)
	if n := bs.puts.Load(); n != 0 {
		t.Fatalf("%d single cursor writes, want 0: the store takes batches", n)
	}
	if n := bs.refusals.Load(); n != 2 {
		t.Fatalf("the cursor refused twice was refused %d times before it was stored", n)
	}
	if got := r.count(); got != subs*notes {
		t.Fatalf("%d deliveries, want %d", got, subs*notes)
	}
}

// The flusher waits CursorFlush between rounds while few cursors move, and
// longer after a round of more than its rate (cursorRate) a second's worth,
// in proportion, up to cursorWaitMax: a queue's cursor is still written
// once per round, and rounds come less often when every queue moves.
func TestCursorBatch_WaitGrowsWithTheCursorsOfARound(t *testing.T) {
	t.Parallel()
	b := newCursorBatch(nil, time.Second, nil)
	for _, c := range []struct {
		last int
		want time.Duration
	}{
		{0, time.Second},
		{cursorRate, time.Second},
		{cursorRate * 5 / 2, 2500 * time.Millisecond},
		{cursorRate * 100, cursorWaitMax},
	} {
		if got := b.wait(c.last); got != c.want {
			t.Errorf("after a round of %d cursors: wait %s, want %s", c.last, got, c.want)
		}
	}
	if got := newCursorBatch(nil, 0, nil).wait(cursorRate * 100); got != 0 {
		t.Errorf("with cursors stored at once: wait %s, want 0", got)
	}
	if got := newCursorBatch(nil, time.Minute, nil).wait(cursorRate * 100); got != time.Minute {
		t.Errorf("with CursorFlush longer than cursorWaitMax: wait %s, want a minute", got)
	}
}

// roundStore records when each round of cursors was stored and how many
// it held.
type roundStore struct {
	Store
	mu     sync.Mutex
	rounds []time.Time
	sizes  []int
}

func (s *roundStore) PutCursors(ctx context.Context, cs map[string]hub.Cursor) map[string]error {
	s.mu.Lock()
	s.rounds, s.sizes = append(s.rounds, time.Now()), append(s.sizes, len(cs))
	s.mu.Unlock()
	return nil
}

func (s *roundStore) snapshot() ([]time.Time, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rounds), slices.Clone(s.sizes)
}

// A round of many cursors is followed by a longer wait before the next:
// the run loop spaces its rounds by wait.
func TestCursorBatch_ManyCursorsSpaceTheRounds(t *testing.T) {
	t.Parallel()
	st := &roundStore{}
	b := newCursorBatch(st, 10*time.Millisecond, loophealth.New(slog.New(slog.DiscardHandler)))
	b.rate = 1000 // a round of 500: half a second before the next
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { b.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for i := range 500 {
		b.put("s"+strconv.Itoa(i), 0, hub.Cursor{Seq: 1})
	}
	testenv.Eventually(t, wait, func() bool { r, _ := st.snapshot(); return len(r) == 1 }, "the first round")
	b.put("s1", 0, hub.Cursor{Seq: 2})
	testenv.Eventually(t, wait, func() bool { r, _ := st.snapshot(); return len(r) == 2 }, "the second round")
	rounds, sizes := st.snapshot()
	if sizes[0] != 500 || sizes[1] != 1 {
		t.Fatalf("rounds of %v cursors, want 500 then 1", sizes)
	}
	if gap := rounds[1].Sub(rounds[0]); gap < 400*time.Millisecond {
		t.Fatalf("the round after one of 500 cursors came %s later, want about 500ms at 1000 a second", gap)
	}
}
