package delivery

import (
	"context"
	"runtime"
	"sync"

	"github.com/rshub/rshub/hub/logcache"
)

// wakeIndex is the webhook queues indexed by the log channel they read, so
// that an append wakes only the queues of its channel: delivery work per
// publish grows with the subscribers of that channel, not of the hub. One
// dispatcher goroutine (Webhooks.dispatchWakes) follows the log and signals
// queues through their 1-slot wake channel, which coalesces wake-ups and
// never blocks on a slow queue. A woken queue reads the log from its own
// cursor, so a signal carries no record and losing one to coalescing loses
// nothing.
//
// A queue keeps the channel it is indexed under (queue.watching, under the
// index's lock), so the index has one entry per queue.
type wakeIndex struct {
	mu     sync.RWMutex
	byChan map[string]map[*queue]struct{} // "" holds queues that read every channel
}

func newWakeIndex() *wakeIndex {
	return &wakeIndex{byChan: map[string]map[*queue]struct{}{}}
}

// watch indexes q under channel ("" for every channel), moving it when it
// was indexed under another one.
func (x *wakeIndex) watch(q *queue, channel string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if q.watched {
		if q.watching == channel {
			return
		}
		x.dropLocked(q)
	}
	set := x.byChan[channel]
	if set == nil {
		set = map[*queue]struct{}{}
		x.byChan[channel] = set
	}
	set[q] = struct{}{}
	q.watching, q.watched = channel, true
}

// unwatch removes q from the index.
func (x *wakeIndex) unwatch(q *queue) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if q.watched {
		x.dropLocked(q)
	}
}

func (x *wakeIndex) dropLocked(q *queue) {
	if set := x.byChan[q.watching]; set != nil {
		delete(set, q)
		if len(set) == 0 {
			delete(x.byChan, q.watching)
		}
	}
	q.watching, q.watched = "", false
}

// wakeChunk is how many queues the dispatcher wakes before it lines those
// waiting for a slot: the first deliveries of a fan-out to thousands of
// subscriptions start once the first chunk is lined, while the others
// are woken, instead of once every one is.
const wakeChunk = 64

// wakeScratch is the dispatcher's room for the queues of one wake and the
// line jobs of a chunk, reused from one wake to the next.
type wakeScratch struct {
	qs   []*queue
	jobs []lineJob
}

// wakeChannels signals the queues of each channel in chans and those that
// read every channel, and lines those that wait for a slot of their host,
// wakeChunk at a time (hostLimit.line). The index lock is held only to
// list them: a queue stopped meanwhile is not parked, and a signal to it
// is lost harmlessly.
func (x *wakeIndex) wakeChannels(chans map[string]struct{}, l *hostLimit, sc *wakeScratch) {
	x.mu.RLock()
	for ch := range chans {
		if ch == "" {
			continue
		}
		for q := range x.byChan[ch] {
			sc.qs = append(sc.qs, q)
		}
	}
	for q := range x.byChan[""] {
		sc.qs = append(sc.qs, q)
	}
	x.mu.RUnlock()
	sc.wake(l.line)
}

// wakeAll signals every indexed queue, as wakeChannels: after the
// dispatcher has found its position or recovered from a failing log, when
// it may have missed appends.
func (x *wakeIndex) wakeAll(l *hostLimit, sc *wakeScratch) {
	x.mu.RLock()
	for _, set := range x.byChan {
		for q := range set {
			sc.qs = append(sc.qs, q)
		}
	}
	x.mu.RUnlock()
	sc.wake(l.line)
}

// wake signals the queues listed and lines those to be lined with line
// (hostLimit.line), wakeChunk at a time, leaving the scratch empty and
// holding no queue. Once the first chunk is lined it yields its core
// (runtime.Gosched): the goroutines given a slot for it are ready on the
// dispatcher's core, and on a hub whose cores are busy they would
// otherwise wait there until every queue is woken, half a millisecond
// and more for a thousand on 2 cores, before the first POST goes out.
func (sc *wakeScratch) wake(line func(...lineJob)) {
	lined := false
	for i, q := range sc.qs {
		if j, ok := q.wakeUnlined(); ok {
			sc.jobs = append(sc.jobs, j)
		}
		if len(sc.jobs) > 0 && (len(sc.jobs) == wakeChunk || i == len(sc.qs)-1) {
			line(sc.jobs...)
			if !lined {
				lined = true
				runtime.Gosched() // the first chunk's POSTs go out now
			}
			clear(sc.jobs)
			sc.jobs = sc.jobs[:0]
		}
	}
	clear(sc.qs)
	sc.qs = sc.qs[:0]
}

// dispatchWakes follows the log from its end until ctx ends, through a
// logcache subscription, waking the queues of each new record's channel
// once per batch read. The subscription reads the log on every change
// signal and every Config.Reconcile, its one safety net for lost signals;
// idle queues have no timer of their own.
func (w *Webhooks) dispatchWakes(ctx context.Context) {
	x := w.wakes
	sub := logcache.Subscribe(w.log, 0, logcache.Options{Poll: w.cfg.Reconcile, Name: "delivery: wake-ups", Health: w.h})
	if !sub.SeekEnd(ctx) {
		return
	}
	var sc wakeScratch
	x.wakeAll(w.limit, &sc) // queues that read the log before the position was found
	chans := map[string]struct{}{}
	for {
		b, ok := sub.Next(ctx)
		if !ok {
			return
		}
		if b.Resumed { // the log failed: queues may have backed off meanwhile
			x.wakeAll(w.limit, &sc)
		}
		for _, rec := range b.Records {
			w.noteSeq(rec.Seq)
			chans[rec.Channel] = struct{}{}
		}
		if len(chans) > 0 {
			x.wakeChannels(chans, w.limit, &sc)
			clear(chans)
		}
	}
}
