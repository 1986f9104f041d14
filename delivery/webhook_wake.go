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
// read every channel.
func (x *wakeIndex) wakeChannels(chans map[string]struct{}) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for ch := range chans {
		if ch == "" {
			continue
		}
		for q := range x.byChan[ch] {
			q.signal()
		}
	}
	for q := range x.byChan[""] {
		q.signal()
	}
}

// wakeAll signals every indexed queue: after the dispatcher has found its
// position or recovered from a failing log, when it may have missed
// appends.
func (x *wakeIndex) wakeAll() {
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, set := range x.byChan {
		for q := range set {
			q.signal()
		}
	}
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
	x.wakeAll() // queues that read the log before the position was found
	chans := map[string]struct{}{}
	for {
		b, ok := sub.Next(ctx)
		if !ok {
			return
		}
		if b.Resumed { // the log failed: queues may have backed off meanwhile
			x.wakeAll()
		}
		for _, rec := range b.Records {
			w.noteSeq(rec.Seq)
			chans[rec.Channel] = struct{}{}
		}
		if len(chans) > 0 {
			x.wakeChannels(chans)
			clear(chans)
		}
	}
}
