package delivery

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	"golang.org/x/time/rate"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/loophealth"
)

// queue delivers one subscription's notifications in log order. Its
// goroutine runs q.run; other goroutines only touch the fields under mu.
type queue struct {
	w        *Webhooks
	id       string
	callback string
	shard    int // hub.ShardOf(id)
	// listed, set when the queue was started from a listing of its shard
	// (start reads no subscription again), holds what the listing read of
	// its state; the queue's first goroutine only, nil once started.
	listed *startState
	host   string
	// parent is the engine's Run context; each goroutine running the
	// queue gets a context of its own with its values, cancelled by stop
	// or by parent's end (queue_park.go). A parked queue holds no context
	// of its own.
	parent context.Context
	wake   chan struct{} // a changed subscription or an append to its channel; buffered 1
	// logger adds the queue's attributes as it logs (queue_log.go); h
	// tracks the store and log calls of this queue that fail. Both are
	// held in the queue rather than apart, two objects fewer per queue for
	// the collector to mark on a hub of a million.
	logger slog.Logger
	h      loophealth.Tracker
	// signals counts the wake-ups sent by the dispatcher (wakeIndex) and
	// woken the waits for more that ended on one; both for tests.
	signals atomic.Uint64
	woken   atomic.Uint64
	// target is the callback URL that last passed netguard.CheckURL,
	// parsed (request.go); the queue's goroutine only.
	target *target
	// rate paces the subscription's attempts (rate.go); nil while it has
	// had no rate. The queue's goroutine only.
	rate *rate.Limiter
	// held is a slot of the queue's host handed to it from its host's line
	// (queue_park.go) and not used yet; the queue's goroutine only.
	held hostSlot
	// attempts records the queue's attempts in Config.Attempts, made at
	// its first (attemptlog.go); the queue's goroutine only.
	attempts AttemptRecorder

	mu      sync.Mutex
	gen     uint64 // Webhooks.gen when sub was last set
	sub     hub.Subscription
	stats   queueStats
	idle    bool // caught up with the log
	stalled bool // a store or log call is failing (h)
	gone    bool // the goroutine ended; Webhooks.index forgot the queue
	// lined is set while the queue, woken from its parked state, waits in
	// its host's line without a goroutine (hostLimit.line).
	lined bool
	// watched is set while the queue is indexed in Webhooks.wakes, under
	// watching (both under wakes.mu).
	watched bool
	// stopped is set once the queue is to end, finished once it has ended
	// for good (finishLocked). The flags lie together: the queue's size
	// stays within the allocator's 896-byte class.
	stopped  bool
	finished bool
	// parked is the state of a queue parked without a goroutine, nil while
	// one runs it. Webhooks.leases signals the queue at leaseAt, the end
	// of its lease leaseFor, while leaseIdx ≥ 0 (the three under
	// Webhooks.leases.mu).
	parked   *runState
	leaseAt  time.Duration
	leaseFor time.Time
	leaseIdx int
	// watching is the channel the queue is indexed under in
	// Webhooks.wakes while watched.
	watching string
	// cancelRun cancels the context of the goroutine running the queue,
	// nil while none does.
	cancelRun context.CancelFunc
	// done, made only when someone waits (doneChan), is closed once the
	// queue has finished.
	done chan struct{}
	// rq makes the POSTs of the goroutine running the queue (post.go),
	// nil while none does; set and cleared with cancelRun's goroutine.
	rq *requester
}

// stop reasons of a queue's delivery loop.
type stopReason int

const (
	stopCtx     stopReason = iota // stopped, shard given up, or the engine is stopping
	stopExpired                   // lease ended or subscription no longer active
	stopGone                      // 410 Gone or deleted
	stopParked                    // caught up and parked without a goroutine
)

func newQueue(w *Webhooks, sub hub.Subscription, gen uint64, parent context.Context, listed *startState) *queue {
	q := &queue{
		w:        w,
		listed:   listed,
		parent:   parent,
		id:       sub.ID,
		callback: sub.Callback,
		shard:    hub.ShardOf(sub.ID),
		host:     hostOf(sub.Callback),
		wake:     make(chan struct{}, 1),
		gen:      gen,
		sub:      shareStrings(sub, hub.Subscription{}),
		leaseIdx: -1,
	}
	q.logger = *slog.New(queueLog{q})
	q.h.Init(&q.logger)
	q.h.Watch(func(stalled bool) {
		q.mu.Lock()
		q.stalled = stalled
		w.index.changed(q, q.stats, q.stats)
		q.mu.Unlock()
	})
	q.stats = queueStats{State: StateStarting}
	w.index.add(q)
	return q
}

// setSub replaces the queue's copy of its subscription and wakes the
// queue when something it uses changed.
func (q *queue) setSub(sub hub.Subscription, gen uint64) {
	q.mu.Lock()
	old := q.sub
	q.sub, q.gen = shareStrings(sub, old), gen
	q.mu.Unlock()
	if old.Expires.Equal(sub.Expires) && old.State == sub.State && old.Secret == sub.Secret &&
		old.Rate == sub.Rate && old.OperatorRate == sub.OperatorRate {
		return
	}
	q.signal()
}

// shareStrings returns sub with its topic and channel names shared with
// the other subscriptions' that have the same (unique.Make): a channel's
// subscriptions are read from the store one by one, each with copies of
// its own, and a queue keeps its subscription as long as it lives. The
// names of prev, the queue's subscription so far, are kept when they are
// the same: a subscription read again is not looked up again.
func shareStrings(sub, prev hub.Subscription) hub.Subscription {
	sub.Topic = shared(sub.Topic, prev.Topic)
	sub.Channel = shared(sub.Channel, prev.Channel)
	return sub
}

// shared is prev when s equals it, else the one shared copy of s.
func shared(s, prev string) string {
	if s == prev {
		return prev
	}
	return unique.Make(s).Value()
}

func (q *queue) getSub() hub.Subscription {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sub
}

func (q *queue) update(fn func(s *SubStats)) {
	q.mu.Lock()
	before := q.stats
	s := q.subStatsLocked()
	fn(&s)
	q.stats = keptStats(s)
	if before.State != q.stats.State || before.DeadLetters != q.stats.DeadLetters { // all the index counts
		q.w.index.changed(q, before, q.stats)
	}
	q.mu.Unlock()
}

// Operations of a queue whose failures its health follows.
const (
	opLog         = "reading the log"
	opCursorRead  = "reading the cursor"
	opCursorWrite = "storing the cursor"
	opDeadLetter  = "storing a dead letter"
	opDelete      = "deleting the subscription after 410 Gone"
)

// end records why q's delivery loop stopped: a queue whose lease ended or
// whose subscription is gone shows as stopped until it finishes.
func (q *queue) end(reason stopReason) {
	switch reason {
	case stopExpired, stopGone:
		q.update(func(s *SubStats) { s.State = StateStopped })
	}
}

// runState is where a queue's delivery loop is: what it keeps across
// iterations, and across a park.
type runState struct {
	channel string
	cursor  hub.Cursor
	cu      catchUp
}

// start reads the subscription (unless a listing just did), its cursor
// and dead letters and returns the state to deliver from, or nil and why
// the queue stops first.
func (q *queue) start(ctx context.Context) (*runState, stopReason) {
	w := q.w
	pre := q.listed
	q.listed = nil
	sub, err := q.getSub(), error(nil)
	if pre == nil {
		sub, err = w.store.Subscription(ctx, q.id)
	}
	switch {
	case errors.Is(err, hub.ErrNotFound):
		return nil, stopGone
	case err == nil:
		q.mu.Lock()
		if sub.Expires.After(q.sub.Expires) || sub.Expires.Equal(q.sub.Expires) {
			q.sub = shareStrings(sub, q.sub)
		}
		sub = q.sub
		q.mu.Unlock()
	default:
		sub = q.getSub()
	}
	if !deliverable(sub, w.cfg.Clock()) {
		return nil, stopExpired
	}

	channel := logChannel(sub)
	w.wakes.watch(q, channel)                // before the first read: no append goes unannounced
	stored, handed := w.cursors.latest(q.id) // an earlier queue's, not stored yet
	if !q.h.Do(ctx, opCursorRead, func() error {
		var err error
		if !handed {
			stored, err = pre.cursor(ctx, w.store, q.id)
		}
		if errors.Is(err, hub.ErrNotFound) {
			stored, err = hub.Cursor{Seq: max(sub.StartSeq, 1) - 1}, nil
		}
		if err != nil {
			return err
		}
		dls, err := pre.deadLetters(ctx, w.store, q.id)
		if err == nil {
			q.update(func(s *SubStats) { s.DeadLetters = dls })
		}
		return err
	}) {
		return nil, stopCtx
	}
	q.update(func(s *SubStats) { s.Cursor = stored; s.State = StateActive })
	return &runState{channel: channel, cursor: stored}, stopCtx
}

// loop delivers from st onwards until ctx ends, the lease ends, the
// subscription is gone or the queue parks, caught up. A queue that parks
// holding the slot of its host it delivered with returns that slot, for
// the next queue in the host's line (handOn).
func (q *queue) loop(ctx context.Context, st *runState) (reason stopReason, kept hostSlot) {
	w := q.w
	channel := st.channel
	for {
		sub := q.getSub()
		now := w.cfg.Clock()
		if !deliverable(sub, now) {
			q.logger.Info("lease ended; delivery stopped", "expires", sub.Expires)
			return stopExpired, hostSlot{}
		}
		rec, err := w.reads.Next(ctx, channel, st.cursor.Seq+1)
		if q.h.Report(ctx, opLog, reached(err)) != nil {
			q.dropSlot() // no slot held while waiting (queue_park.go)
			if !q.h.Backoff(ctx, opLog, 0) {
				return stopCtx, hostSlot{}
			}
			continue
		}
		if err != nil { // hub.ErrNotFound: caught up
			q.mu.Lock()
			q.idle = true
			q.mu.Unlock()
			// the slot leaves q before it parks: another goroutine may run
			// q once parked
			slot := q.held
			q.held = hostSlot{}
			if q.park(ctx, st, sub, now) {
				return stopParked, slot
			}
			if slot.l != nil {
				slot.release()
			}
			if !q.waitForMore(ctx, sub, now) {
				return stopCtx, hostSlot{}
			}
			continue
		}
		q.mu.Lock()
		q.idle = false
		q.mu.Unlock()
		w.noteSeq(rec.Seq)
		if rec.Seq > st.cursor.Seq+1 {
			q.noteRetention(ctx, st.cursor.Seq+1)
		}
		if channel == "" && rec.Topic != sub.Topic {
			st.cursor.Seq = rec.Seq // another topic's record in the shared log
			continue
		}
		var run *logcache.CoalescedRun
		if channel != "" {
			if run, err = q.runFor(ctx, &st.cu, sub, channel, rec); q.h.Report(ctx, opLog, err) != nil {
				q.dropSlot()
				if !q.h.Backoff(ctx, opLog, 0) {
					return stopCtx, hostSlot{}
				}
				continue
			}
		}
		switch q.deliver(ctx, rec, run) {
		case resultAbandoned:
			return stopCtx, hostSlot{}
		case resultGone:
			q.logger.Info("callback answered 410 Gone; subscription deleted")
			w.forget(q.id)
			w.cursors.forget(q.id)
			q.h.Do(ctx, opDelete, func() error {
				// the first attempt is made even when the engine is stopping
				dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := w.store.DeleteSubscription(dctx, q.id); err != nil && !errors.Is(err, hub.ErrNotFound) {
					return err
				}
				return nil
			})
			return stopGone, hostSlot{}
		}
		cursor := hub.Cursor{Seq: rec.Seq, Until: rec.Until}
		if run != nil {
			cursor = hub.Cursor{Seq: run.Last, Until: run.Until}
		}
		st.cursor = cursor
		w.cursors.put(q.id, q.shard, cursor)
		q.update(func(s *SubStats) { s.Cursor = cursor })
		if ctx.Err() != nil {
			return stopCtx, hostSlot{}
		}
	}
}

// waitForMore waits for a wake-up (an append to the queue's channel, as
// announced by the dispatcher, or a changed subscription), the end of the
// lease or the end of ctx. It reports whether to go on. An idle queue
// with no lease end ahead has no timer: it costs no CPU until woken.
func (q *queue) waitForMore(ctx context.Context, sub hub.Subscription, now time.Time) bool {
	var wait time.Duration // 0: no timer
	if !sub.Expires.IsZero() {
		wait = sub.Expires.Sub(now)
		if wait <= 0 {
			return ctx.Err() == nil
		}
	}
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-q.wake:
		q.woken.Add(1)
	case <-timeout:
	}
	return true
}

// noteRetention warns when the records from want on were removed by
// retention before this subscription received them.
func (q *queue) noteRetention(ctx context.Context, want uint64) {
	first, _, err := q.w.log.Bounds(ctx)
	if err == nil && first > want {
		q.logger.Warn("records removed by retention before delivery; skipping them",
			"from", want, "to", first-1)
	}
}

// sleep waits d, or until a or b is closed or receives; it returns false
// when ctx ended first. Nil channels are never ready.
func sleep(ctx context.Context, d time.Duration, a, b <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-a:
	case <-b:
	}
	return true
}

// jitter returns a random number in [0, 1) for Schedule.Delay.
func jitter() float64 { return rand.Float64() }

// errCircuitOpen is matched by the reason of a notification given up
// because its callback's or its host's circuit stayed open (isolate.go).
var errCircuitOpen = errors.New("circuit open")
