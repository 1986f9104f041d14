package delivery

import (
	"context"
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

// wakeChannels signals the queues of each channel in chans and those that
// read every channel, and lines those that wait for a slot of their host
// in one pass (hostLimit.line). jobs is room for them, returned empty for
// the next call.
func (x *wakeIndex) wakeChannels(chans map[string]struct{}, l *hostLimit, jobs []lineJob) []lineJob {
	x.mu.RLock()
	for ch := range chans {
		if ch == "" {
			continue
		}
		for q := range x.byChan[ch] {
			jobs = wakeInto(q, jobs)
		}
	}
	for q := range x.byChan[""] {
		jobs = wakeInto(q, jobs)
	}
	x.mu.RUnlock()
	return lineAll(l, jobs)
}

// wakeAll signals every indexed queue, as wakeChannels: after the
// dispatcher has found its position or recovered from a failing log, when
// it may have missed appends.
func (x *wakeIndex) wakeAll(l *hostLimit, jobs []lineJob) []lineJob {
	x.mu.RLock()
	for _, set := range x.byChan {
		for q := range set {
			jobs = wakeInto(q, jobs)
		}
	}
	x.mu.RUnlock()
	return lineAll(l, jobs)
}

// wakeInto signals q, appending it to jobs when it is to be lined.
func wakeInto(q *queue, jobs []lineJob) []lineJob {
	if j, ok := q.wakeUnlined(); ok {
		jobs = append(jobs, j)
	}
	return jobs
}

// lineAll lines jobs, if any, and returns them emptied, holding no queue.
func lineAll(l *hostLimit, jobs []lineJob) []lineJob {
	if len(jobs) > 0 {
		l.line(jobs...)
	}
	clear(jobs)
	return jobs[:0]
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
	jobs := x.wakeAll(w.limit, nil) // queues that read the log before the position was found
	chans := map[string]struct{}{}
	for {
		b, ok := sub.Next(ctx)
		if !ok {
			return
		}
		if b.Resumed { // the log failed: queues may have backed off meanwhile
			jobs = x.wakeAll(w.limit, jobs)
		}
		for _, rec := range b.Records {
			w.noteSeq(rec.Seq)
			chans[rec.Channel] = struct{}{}
		}
		if len(chans) > 0 {
			jobs = x.wakeChannels(chans, w.limit, jobs)
			clear(chans)
		}
	}
}
