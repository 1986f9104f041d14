package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
)

// Operations of the wake-up dispatcher whose failures the engine's health
// follows.
const (
	opWakePosition = "finding the log's last sequence for wake-ups"
	opWakeFollow   = "following the log for wake-ups"
)

// wakeIndex is the webhook queues indexed by the log channel they read, so
// that an append wakes only the queues of its channel: delivery work per
// publish grows with the subscribers of that channel, not of the hub. One
// dispatcher goroutine (Webhooks.dispatchWakes) follows the log and signals
// queues through their 1-slot wake channel, which coalesces wake-ups and
// never blocks on a slow queue. A woken queue reads the log from its own
// cursor, so a signal carries no record and losing one to coalescing loses
// nothing.
type wakeIndex struct {
	mu     sync.RWMutex
	byChan map[string]map[*queue]struct{} // "" holds queues that read every channel
	all    map[*queue]string              // queue → the channel it is indexed under
	pos    uint64                         // last sequence followed; dispatcher only
}

func newWakeIndex() *wakeIndex {
	return &wakeIndex{byChan: map[string]map[*queue]struct{}{}, all: map[*queue]string{}}
}

// watch indexes q under channel ("" for every channel), moving it when it
// was indexed under another one.
func (x *wakeIndex) watch(q *queue, channel string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.all[q]; ok {
		if old == channel {
			return
		}
		x.dropLocked(q, old)
	}
	set := x.byChan[channel]
	if set == nil {
		set = map[*queue]struct{}{}
		x.byChan[channel] = set
	}
	set[q] = struct{}{}
	x.all[q] = channel
}

// unwatch removes q from the index.
func (x *wakeIndex) unwatch(q *queue) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.all[q]; ok {
		x.dropLocked(q, old)
	}
}

func (x *wakeIndex) dropLocked(q *queue, channel string) {
	delete(x.all, q)
	if set := x.byChan[channel]; set != nil {
		delete(set, q)
		if len(set) == 0 {
			delete(x.byChan, channel)
		}
	}
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
	for q := range x.all {
		q.signal()
	}
}

// dispatchWakes follows the log from its end until ctx ends, waking the
// queues of each new record's channel. It reads the log on every change
// signal and every Config.Reconcile, its one safety net for lost signals;
// idle queues have no timer of their own.
func (w *Webhooks) dispatchWakes(ctx context.Context) {
	x := w.wakes
	if !w.wakePosition(ctx) {
		return
	}
	x.wakeAll() // queues that read the log before the position was found
	tick := time.NewTicker(w.cfg.Reconcile)
	defer tick.Stop()
	failing := false
	for {
		changed := w.log.Changed() // taken before reading: no lost signal
		if w.h.Report(ctx, opWakeFollow, w.wakeNew(ctx)) != nil {
			if !w.h.Backoff(ctx, opWakeFollow, loophealth.EngineRetry) {
				return
			}
			failing = true
			continue
		}
		if failing {
			failing = false
			x.wakeAll()
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// wakePosition sets the dispatcher's position to the log's last sequence
// once Next can see it (a cache in front of the log may lag its Bounds),
// so that every later append is one the dispatcher reads. It reports false
// when ctx ends first.
func (w *Webhooks) wakePosition(ctx context.Context) bool {
	tick := time.NewTicker(w.cfg.Reconcile)
	defer tick.Stop()
	for {
		changed := w.log.Changed()
		_, last, err := w.log.Bounds(ctx)
		if err == nil && last > 0 {
			_, err = w.log.Next(ctx, "", last)
		}
		if err != nil {
			err = fmt.Errorf("delivery: wake-ups: %w", err)
		}
		if w.h.Report(ctx, opWakePosition, reached(err)) != nil {
			if !w.h.Backoff(ctx, opWakePosition, loophealth.EngineRetry) {
				return false
			}
			continue
		}
		if err == nil {
			w.wakes.pos = last
			return true
		}
		select { // not visible yet
		case <-ctx.Done():
			return false
		case <-changed:
		case <-tick.C:
		}
	}
}

// wakeNew reads every record after the dispatcher's position and wakes the
// queues of their channels, each once per batch read.
func (w *Webhooks) wakeNew(ctx context.Context) error {
	x := w.wakes
	chans := map[string]struct{}{}
	defer func() {
		if len(chans) > 0 {
			x.wakeChannels(chans)
		}
	}()
	for {
		rec, err := w.log.Next(ctx, "", x.pos+1)
		if errors.Is(err, hub.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("delivery: wake-ups from %d: %w", x.pos+1, err)
		}
		if rec.Seq <= x.pos {
			return fmt.Errorf("delivery: wake-ups from %d: log returned %d", x.pos+1, rec.Seq)
		}
		x.pos = rec.Seq
		w.noteSeq(rec.Seq)
		chans[rec.Channel] = struct{}{}
		if len(chans) >= wakeBatch {
			x.wakeChannels(chans)
			clear(chans)
		}
	}
}

// wakeBatch is how many distinct channels a catch-up collects before it
// wakes their queues, so that a long burst is announced in steps.
const wakeBatch = 256
