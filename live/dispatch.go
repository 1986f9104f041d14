package live

import (
	"context"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// dispatchPoll is how often the dispatcher reads the log without a change
// signal.
const dispatchPoll = 5 * time.Second

// encodedFrame is one frame's JSON with its WebSocket and Server-Sent
// Events forms, each made at most once, for every session that writes it.
type encodedFrame struct {
	kind    string      // a wire.Frame* type
	id      wire.Cursor // the cursor a client holds once it has the frame
	json    []byte
	wsOnce  sync.Once
	pm      *websocket.PreparedMessage
	sseOnce sync.Once
	sse     []byte
}

// prepared returns the frame as a WebSocket text message, nil if it cannot
// be made.
func (e *encodedFrame) prepared() *websocket.PreparedMessage {
	e.wsOnce.Do(func() {
		e.pm, _ = websocket.NewPreparedMessage(websocket.TextMessage, e.json)
	})
	return e.pm
}

// event returns the frame as a Server-Sent Event.
func (e *encodedFrame) event() []byte {
	e.sseOnce.Do(func() { e.sse = appendEvent(nil, e.kind, e.id, e.json) })
	return e.sse
}

// liveRecord is a record being fanned out, encoded at most once per
// variant (with and without raw) for the sessions that do not filter
// entries.
type liveRecord struct {
	rec       wire.Record
	plainOnce sync.Once
	rawOnce   sync.Once
	plain     *encodedFrame
	raw       *encodedFrame
}

// frame returns the record's notification frame, nil if it cannot be
// encoded.
func (r *liveRecord) frame(raw bool) *encodedFrame {
	once, e := &r.plainOnce, &r.plain
	if raw {
		once, e = &r.rawOnce, &r.raw
	}
	once.Do(func() {
		if b, err := notificationJSON(r.rec, raw, changefeed.Filter{}); err == nil {
			*e = &encodedFrame{kind: wire.FrameNotification, id: wire.Cursor{Epoch: r.rec.Epoch, Seq: r.rec.Seq}, json: b}
		}
	})
	return *e
}

// dispatch follows the log through a logcache subscription from the log's
// end until ctx ends, and queues each new record, encoded once, to every
// caught-up session that wants it. The subscription retries a failing log
// with backoff, reporting it to the transport's health, and goes on from
// the last record fanned out.
func (ls *Sessions) dispatch(ctx context.Context) {
	sub := logcache.Subscribe(ls.cfg.Log, 0, logcache.Options{Poll: dispatchPoll, Name: "websocket", Health: ls.h})
	if !sub.SeekEnd(ctx) {
		return
	}
	ls.mu.Lock()
	ls.dispatched = sub.Position()
	ls.mu.Unlock()
	close(ls.ready)
	for {
		b, ok := sub.Next(ctx)
		if !ok {
			return
		}
		for _, rec := range b.Records {
			ls.dispatchRecord(rec)
		}
	}
}

// dispatchRecord fans out rec, after a gap frame when records before it
// were removed since the last one fanned out.
func (ls *Sessions) dispatchRecord(rec wire.Record) {
	next := ls.position() + 1
	var gap *encodedFrame
	if rec.Seq > next {
		gap = &encodedFrame{kind: wire.FrameGap, id: wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq - 1},
			json: wire.GapFrame(next, rec.Seq-1, "records removed from the log (retention), or quarantined as undecodable, before they were delivered live")}
	}
	lr := &liveRecord{rec: rec}
	plain, raw := ls.liveCounts()
	if plain > 0 { // encode outside the lock; sessions joining meanwhile encode lazily
		lr.frame(false)
	}
	if raw > 0 {
		lr.frame(true)
	}
	ls.fanOut(lr, gap)
}

// fanOut queues lr (after gap, if any) to the live sessions that want it
// and advances the dispatcher's position.
func (ls *Sessions) fanOut(lr *liveRecord, gap *encodedFrame) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	seq := lr.rec.Seq
	if gap != nil {
		for s := range ls.liveAll {
			ls.pushLocked(s, liveFrame{pos: seq - 1, gap: gap})
		}
		for _, set := range ls.liveBy {
			for s := range set {
				ls.pushLocked(s, liveFrame{pos: seq - 1, gap: gap})
			}
		}
	}
	for s := range ls.liveAll {
		if s.wants(&lr.rec) {
			ls.pushLocked(s, liveFrame{pos: seq, lr: lr})
		}
	}
	for s := range ls.liveBy[lr.rec.Channel] {
		if s.wants(&lr.rec) {
			ls.pushLocked(s, liveFrame{pos: seq, lr: lr})
		}
	}
	ls.dispatched = seq
}

// pushLocked queues a frame that brings s to f.pos, or closes s as a slow
// consumer when its queue is full. The caller holds ls.mu.
func (ls *Sessions) pushLocked(s *session, f liveFrame) {
	if f.pos <= s.cursor {
		return
	}
	s.cursor = f.pos
	s.mu.Lock()
	if len(s.queue) >= ls.cfg.SendQueue {
		s.mu.Unlock()
		ls.leaveLocked(s)
		ls.slow.Add(1)
		s.close(wire.CloseSlowConsumer, "slow consumer; resume with since=%d")
		return
	}
	s.queue = append(s.queue, f)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// liveCounts returns how many live sessions want shared plain and raw
// frames (sessions that filter entries encode their own).
func (ls *Sessions) liveCounts() (plain, raw int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.livePlain, ls.liveRaw
}

// position returns the last sequence the dispatcher fanned out.
func (ls *Sessions) position() uint64 {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.dispatched
}

// join adds s to the live fan-out at cursor if the dispatcher has not gone
// past it, and reports whether it did.
func (ls *Sessions) join(s *session, cursor uint64) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.dispatched > cursor {
		return false
	}
	if _, ok := ls.sessions[s]; !ok {
		return true // removed meanwhile; the writer sees its context end
	}
	s.cursor = cursor
	s.live = true
	switch {
	case !s.req.filter.IsZero():
	case s.req.raw:
		ls.liveRaw++
	default:
		ls.livePlain++
	}
	if s.req.all {
		ls.liveAll[s] = struct{}{}
		return true
	}
	for _, c := range s.req.channels {
		set := ls.liveBy[c]
		if set == nil {
			set = map[*session]struct{}{}
			ls.liveBy[c] = set
		}
		set[s] = struct{}{}
	}
	return true
}

// leaveLocked removes s from the live fan-out. The caller holds ls.mu.
func (ls *Sessions) leaveLocked(s *session) {
	if !s.live {
		return
	}
	s.live = false
	switch {
	case !s.req.filter.IsZero():
	case s.req.raw:
		ls.liveRaw--
	default:
		ls.livePlain--
	}
	delete(ls.liveAll, s)
	for _, c := range s.req.channels {
		if set := ls.liveBy[c]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(ls.liveBy, c)
			}
		}
	}
}
