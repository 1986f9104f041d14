package delivery

import (
	"errors"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
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
	rec       hub.Record
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

// Operations of the dispatcher whose failures its health follows.
const (
	opPosition = "websocket: finding the log's last sequence"
	opFollow   = "websocket: following the log"
)

// dispatch follows the log and queues each new record, encoded once, to
// every caught-up session that wants it. A log that fails is retried with
// backoff until it works again, from the last record fanned out.
func (ws *WebSockets) dispatch() {
	defer ws.done.Done()
	log := ws.cfg.Log
	poll := time.NewTicker(dispatchPoll)
	defer poll.Stop()
	if !ws.startPosition(poll.C) {
		return
	}
	close(ws.ready)
	for {
		changed := log.Changed()
		if ws.h.Report(ws.ctx, opFollow, ws.dispatchNew()) != nil {
			if !ws.h.Backoff(ws.ctx, opFollow, loophealth.EngineRetry) {
				return
			}
			continue
		}
		select {
		case <-ws.ctx.Done():
			return
		case <-changed:
		case <-poll.C:
		}
	}
}

// startPosition sets the dispatcher's position to the log's last sequence
// once Next can see it: sessions rely on every record up to the position
// being visible to them (a cache in front of the log may lag the log's
// Bounds). It reports false when the transport shuts down first.
func (ws *WebSockets) startPosition(poll <-chan time.Time) bool {
	log := ws.cfg.Log
	for {
		changed := log.Changed()
		_, last, err := log.Bounds(ws.ctx)
		if err == nil && last > 0 {
			_, err = log.Next(ws.ctx, "", last)
		}
		if ws.h.Report(ws.ctx, opPosition, reached(err)) != nil {
			if !ws.h.Backoff(ws.ctx, opPosition, loophealth.EngineRetry) {
				return false
			}
			continue
		}
		if err == nil {
			ws.mu.Lock()
			ws.dispatched = last
			ws.mu.Unlock()
			return true
		}
		select { // not visible yet
		case <-ws.ctx.Done():
			return false
		case <-changed:
		case <-poll:
		}
	}
}

// dispatchNew fans out every record after the dispatcher's position.
func (ws *WebSockets) dispatchNew() error {
	next := ws.position() + 1
	for {
		rec, err := ws.cfg.Log.Next(ws.ctx, "", next)
		if errors.Is(err, hub.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var gap *encodedFrame
		if rec.Seq > next {
			gap = &encodedFrame{kind: wire.FrameGap, id: wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq - 1},
				json: wire.GapFrame(next, rec.Seq-1, "records removed from the log (retention), or quarantined as undecodable, before they were delivered live")}
		}
		lr := &liveRecord{rec: rec}
		plain, raw := ws.liveCounts()
		if plain > 0 { // encode outside the lock; sessions joining meanwhile encode lazily
			lr.frame(false)
		}
		if raw > 0 {
			lr.frame(true)
		}
		ws.fanOut(lr, gap)
		next = rec.Seq + 1
	}
}

// fanOut queues lr (after gap, if any) to the live sessions that want it
// and advances the dispatcher's position.
func (ws *WebSockets) fanOut(lr *liveRecord, gap *encodedFrame) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	seq := lr.rec.Seq
	if gap != nil {
		for s := range ws.liveAll {
			ws.pushLocked(s, liveFrame{pos: seq - 1, gap: gap})
		}
		for _, set := range ws.liveBy {
			for s := range set {
				ws.pushLocked(s, liveFrame{pos: seq - 1, gap: gap})
			}
		}
	}
	for s := range ws.liveAll {
		if s.wants(&lr.rec) {
			ws.pushLocked(s, liveFrame{pos: seq, lr: lr})
		}
	}
	for s := range ws.liveBy[lr.rec.Channel] {
		if s.wants(&lr.rec) {
			ws.pushLocked(s, liveFrame{pos: seq, lr: lr})
		}
	}
	ws.dispatched = seq
}

// pushLocked queues a frame that brings s to f.pos, or closes s as a slow
// consumer when its queue is full. The caller holds ws.mu.
func (ws *WebSockets) pushLocked(s *session, f liveFrame) {
	if f.pos <= s.cursor {
		return
	}
	s.cursor = f.pos
	s.mu.Lock()
	if len(s.queue) >= ws.cfg.SendQueue {
		s.mu.Unlock()
		ws.leaveLocked(s)
		ws.slow.Add(1)
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
func (ws *WebSockets) liveCounts() (plain, raw int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.livePlain, ws.liveRaw
}

// position returns the last sequence the dispatcher fanned out.
func (ws *WebSockets) position() uint64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.dispatched
}

// join adds s to the live fan-out at cursor if the dispatcher has not gone
// past it, and reports whether it did.
func (ws *WebSockets) join(s *session, cursor uint64) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.dispatched > cursor {
		return false
	}
	if _, ok := ws.sessions[s]; !ok {
		return true // removed meanwhile; the writer sees its context end
	}
	s.cursor = cursor
	s.live = true
	switch {
	case !s.req.filter.IsZero():
	case s.req.raw:
		ws.liveRaw++
	default:
		ws.livePlain++
	}
	if s.req.all {
		ws.liveAll[s] = struct{}{}
		return true
	}
	for _, c := range s.req.channels {
		set := ws.liveBy[c]
		if set == nil {
			set = map[*session]struct{}{}
			ws.liveBy[c] = set
		}
		set[s] = struct{}{}
	}
	return true
}

// leaveLocked removes s from the live fan-out. The caller holds ws.mu.
func (ws *WebSockets) leaveLocked(s *session) {
	if !s.live {
		return
	}
	s.live = false
	switch {
	case !s.req.filter.IsZero():
	case s.req.raw:
		ws.liveRaw--
	default:
		ws.livePlain--
	}
	delete(ws.liveAll, s)
	for _, c := range s.req.channels {
		if set := ws.liveBy[c]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(ws.liveBy, c)
			}
		}
	}
}
