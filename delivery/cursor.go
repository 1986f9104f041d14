package delivery

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
)

// DefaultCursorFlush is how long, at most, a delivered cursor waits before
// it is stored.
const DefaultCursorFlush = time.Second

// cursorWriters bounds the cursor writes of one flush in flight at once.
const cursorWriters = 8

// cursorRate is the cursor writes a second the flusher keeps to when more
// cursors move than that: a round of n cursors is followed by a wait of
// n/cursorRate seconds rather than Config.CursorFlush, up to cursorWaitMax,
// so that each round holds more of the queues' moves, still one write per
// subscription. A hub whose queues all deliver every second (ten thousand
// subscriptions of one busy channel) would otherwise spend about a fifth
// of its delivery CPU storing cursors; at 2,000 a second (a round every
// 5 s for those ten thousand) a put is about 10 µs of CPU
// (BenchmarkStore_Cursors), 2 % of one core.
const cursorRate = 2000

// cursorWaitMax bounds the wait between two rounds however many cursors
// move (when it is longer than Config.CursorFlush).
const cursorWaitMax = 5 * time.Second

// cursorBatch stores the cursors the queues reach, for all queues
// together: a queue hands its cursor over after each delivery (a map
// write, no I/O) and a flusher stores every cursor that moved at most
// Config.CursorFlush later, one write per subscription per flush however
// many notifications it got meanwhile. In the fan-out pattern (one
// notification to every subscription of a channel, each queue catching up
// after each one) that turns a store write per delivery into one per
// subscription per interval.
//
// Guarantees:
//   - At least once: a cursor is only ever handed over after a 2xx (or a
//     stored dead letter). A hub process that dies redelivers to each
//     subscription at most what it delivered in the last CursorFlush (up
//     to cursorWaitMax while more than cursorRate cursors move a second)
//     plus the duration of the write round in flight; nothing is lost. A hub
//     that loses a shard's lease (stalled past a third of it) stores the
//     shard's cursors as soon as it notices (shards.go, afterStopped).
//   - A graceful stop redelivers nothing: Run stores every cursor once its
//     queues have ended, and a shard is given up only after its cursors are
//     stored (flushShard). A queue restarted on this engine resumes from
//     the cursor handed over, stored or not (latest).
//   - Order: one write round at a time, each cursor of a subscription
//     written at most once per round and the newest taken, so an older
//     cursor never lands after a newer one. A store that takes a round in
//     one call (hub.CursorBatcher) has its writes in flight together, and the
//     round ends once each was answered.
//
// A write that fails keeps its cursor pending; the flusher retries with
// backoff and the engine's Health reports it.
type cursorBatch struct {
	store Store
	every time.Duration
	rate  int // cursorRate; tests lower it
	h     *loophealth.Tracker

	mu      sync.Mutex
	pending map[string]pendingCursor // handed over, not known stored
	kick    chan struct{}            // pending became non-empty; buffered 1

	writeMu sync.Mutex // one write round at a time
}

type pendingCursor struct {
	c     hub.Cursor
	shard int
}

// cursorItem is a cursor of one flush.
type cursorItem struct {
	id string
	c  hub.Cursor
}

func newCursorBatch(store Store, every time.Duration, h *loophealth.Tracker) *cursorBatch {
	return &cursorBatch{store: store, every: max(every, 0), rate: cursorRate, h: h, pending: map[string]pendingCursor{}, kick: make(chan struct{}, 1)}
}

// put hands over the cursor id reached; its queue's goroutine only.
func (b *cursorBatch) put(id string, shard int, c hub.Cursor) {
	b.mu.Lock()
	first := len(b.pending) == 0
	b.pending[id] = pendingCursor{c: c, shard: shard}
	b.mu.Unlock()
	if first {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

// latest returns the cursor handed over for id and not known stored.
func (b *cursorBatch) latest(id string) (hub.Cursor, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pending[id]
	return p.c, ok
}

// forget drops id's pending cursor, once any write of it in flight has
// ended: the subscription is being deleted and must not get a cursor back.
func (b *cursorBatch) forget(id string) {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	b.mu.Lock()
	delete(b.pending, id)
	b.mu.Unlock()
}

// run flushes, at most every b.every once a cursor is pending, until ctx
// ends; a failed round is retried with backoff. Idle, it costs nothing.
func (b *cursorBatch) run(ctx context.Context) {
	last := 0 // cursors of the last round
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		if !sleep(ctx, b.wait(last), nil, nil) {
			return
		}
		for {
			n, err := b.flush(ctx, nil)
			last = n
			if b.h.Report(ctx, opCursorWrite, err) == nil {
				break
			}
			if !b.h.Backoff(ctx, opCursorWrite, loophealth.EngineRetry) {
				return
			}
		}
		b.mu.Lock()
		more := len(b.pending) > 0 // handed over during the round
		b.mu.Unlock()
		if more {
			select {
			case b.kick <- struct{}{}:
			default:
			}
		}
	}
}

// wait is how long the flusher waits for moves before a round, after a
// round of last cursors: CursorFlush, longer when the cursors moved faster
// than b.rate a second (cursorRate).
func (b *cursorBatch) wait(last int) time.Duration {
	if b.every <= 0 || b.rate <= 0 {
		return b.every
	}
	busy := time.Duration(last) * time.Second / time.Duration(b.rate)
	return max(b.every, min(busy, cursorWaitMax))
}

// flush makes one attempt at storing every pending cursor, or those of
// the shards only selects when not nil, several at a time. Writes are made
// even when ctx has ended (the cursors of a stopping engine); ctx only
// says whose stop it is. It returns how many cursors it tried to store,
// and the first error.
func (b *cursorBatch) flush(ctx context.Context, only func(shard int) bool) (int, error) {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	b.mu.Lock()
	items := make([]cursorItem, 0, len(b.pending))
	for id, p := range b.pending {
		if only == nil || only(p.shard) {
			items = append(items, cursorItem{id, p.c})
		}
	}
	b.mu.Unlock()
	if len(items) == 0 {
		return 0, nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if p, ok := b.store.(hub.CursorBatcher); ok {
		return len(items), b.putAll(wctx, p, items)
	}
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	next := make(chan cursorItem)
	for range min(cursorWriters, len(items)) {
		wg.Go(func() {
			for it := range next {
				err := b.store.PutCursor(wctx, it.id, it.c)
				if err != nil {
					errMu.Lock()
					if first == nil {
						first = err
					}
					errMu.Unlock()
					continue
				}
				b.stored(it)
			}
		})
	}
	for _, it := range items {
		next <- it
	}
	close(next)
	wg.Wait()
	return len(items), first
}

// putAll stores items in one call of p, for flush.
func (b *cursorBatch) putAll(ctx context.Context, p hub.CursorBatcher, items []cursorItem) error {
	batch := make(map[string]hub.Cursor, len(items))
	for _, it := range items {
		batch[it.id] = it.c
	}
	failed := p.PutCursors(ctx, batch)
	var first error
	for _, it := range items {
		if err := failed[it.id]; err != nil {
			first = cmp.Or(first, err)
			continue
		}
		b.stored(it)
	}
	return first
}

// stored drops it from the pending cursors unless a newer one came since.
func (b *cursorBatch) stored(it cursorItem) {
	b.mu.Lock()
	if p, ok := b.pending[it.id]; ok && p.c == it.c {
		delete(b.pending, it.id)
	}
	b.mu.Unlock()
}

// final stores the pending cursors of the shards only selects (all when
// nil) as the engine stops or gives shards up, retrying for a few seconds;
// it reports whether they were all stored.
func (b *cursorBatch) final(ctx context.Context, only func(shard int) bool) bool {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return b.h.Do(fctx, opCursorWrite, func() error { _, err := b.flush(fctx, only); return err })
}
