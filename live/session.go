package live

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/wire"
)

// sessionOut is what a session writes to: a WebSocket connection or a
// Server-Sent Events response. Only the session's writer calls it.
type sessionOut interface {
	// frame writes one frame of the given wire.Frame* type whose JSON is b;
	// id is the cursor the client holds once it has the frame.
	frame(kind string, id wire.Cursor, b []byte) error
	// encoded writes a frame encoded once for every session that gets it.
	encoded(e *encodedFrame) error
	// keepAlive writes a ping or a comment that keeps the connection open.
	keepAlive() error
	// end writes the session's last words, when code is not 0 (a WebSocket
	// close code, with its reason naming the resume cursor pos), and
	// releases the connection.
	end(code int, reason string, pos uint64)
}

// liveFrame is a live frame queued for a session: a record (encoded at
// most once per variant for every session that receives it) or a gap, and
// the cursor the session reaches by writing it.
type liveFrame struct {
	pos uint64
	lr  *liveRecord
	gap *encodedFrame
}

// session is one WebSocket or Server-Sent Events session. Its writer
// replays the log from the session's cursor, joins the live fan-out once
// caught up and then writes the frames the dispatcher queues. Only the
// writer writes data.
type session struct {
	ls      *Sessions
	out     sessionOut
	req     wsRequest
	counter *atomic.Int64   // the transport's count of open sessions
	ctx     context.Context // ends when the session closes for any reason
	cancel  context.CancelFunc
	wake    chan struct{} // capacity 1: the dispatcher queued frames
	ping    *time.Ticker
	pos     uint64 // writer only: the client has every wanted record up to here
	epoch   string // writer only: the log's identity when the session started
	last    uint64 // writer only: the log's last sequence when the session started
	fails   int    // writer only: log reads failed in a row during replay

	mu     sync.Mutex
	queue  []liveFrame
	spare  []liveFrame // the drained queue's backing array, reused for the next batch
	ended  bool
	code   int    // close code to send, 0 for none
	reason string // close reason, with one %d for the resume cursor

	cursor uint64 // guarded by ls.mu: the dispatcher skips records up to here
	live   bool   // guarded by ls.mu: in the live fan-out
}

func newSession(ls *Sessions, parent context.Context, counter *atomic.Int64, req wsRequest) *session {
	ctx, cancel := context.WithCancel(parent)
	s := &session{
		ls: ls, req: req, counter: counter, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1),
	}
	if req.hasSince { // a session ended before its replay starts tells the client the cursor it came with
		s.pos = req.since
	}
	return s
}

// close ends the session; the first caller chooses the close frame (code 0
// sends none).
func (s *session) close(code int, reason string) {
	s.mu.Lock()
	if !s.ended {
		s.ended, s.code, s.reason = true, code, reason
	}
	s.mu.Unlock()
	s.cancel()
}

// run runs the session: replay, the live frame, then live frames and
// keep-alives until the session ends; then it ends the connection.
func (s *session) run() {
	s.ping = time.NewTicker(s.ls.cfg.PingInterval)
	defer s.finish()
	if stop := s.expireWithToken(); stop != nil {
		defer stop()
	}
	err := s.replay()
	s.recovered() // a session that ends stalled stalls nothing any more
	if err != nil {
		if s.ctx.Err() == nil {
			s.ls.cfg.Logger.Warn("session: replay failed", "err", err)
			s.close(wire.CloseInternalError, "replay failed; resume with since=%d")
		}
		return
	}
	if s.send(wire.FrameLive, s.pos, wire.LiveFrame(s.epoch, s.pos)) != nil {
		return
	}
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
			if s.writeQueued() != nil {
				return
			}
		case <-s.ping.C:
			if s.writePing() != nil {
				return
			}
		}
	}
}

// writeQueued writes the frames the dispatcher queued.
func (s *session) writeQueued() error {
	// two queues take turns, so a steady stream of frames allocates nothing
	s.mu.Lock()
	frames := s.queue
	s.queue, s.spare = s.spare, nil
	s.mu.Unlock()
	defer func() {
		clear(frames) // drop the frames' records
		s.mu.Lock()
		if s.spare == nil {
			s.spare = frames[:0]
		}
		s.mu.Unlock()
	}()
	for _, f := range frames {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if f.lr != nil && s.hides(&f.lr.rec) {
			s.pos = f.pos
			continue
		}
		if err := s.writeLive(f); err != nil {
			s.close(0, "")
			return err
		}
		s.pos = f.pos
	}
	return nil
}

// writeLive writes one queued frame: shared encodings, or the session's own
// when it filters entries.
func (s *session) writeLive(f liveFrame) error {
	rw, own := s.out.(recordWriter)
	switch {
	case f.gap != nil:
		return s.out.encoded(f.gap)
	case own:
		return s.sendTraced(&f.lr.rec, func() error { return rw.record(&f.lr.rec, wire.Cursor{Epoch: f.lr.rec.Epoch, Seq: f.pos}) })
	case !s.req.filter.IsZero():
		b, err := notificationJSON(f.lr.rec, s.req.raw, s.req.filter)
		if err != nil {
			return err
		}
		return s.sendTraced(&f.lr.rec, func() error {
			return s.out.frame(wire.FrameNotification, wire.Cursor{Epoch: f.lr.rec.Epoch, Seq: f.pos}, b)
		})
	default:
		e := f.lr.frame(s.req.raw)
		if e == nil {
			return fmt.Errorf("session: seq %d could not be encoded", f.pos)
		}
		return s.sendTraced(&f.lr.rec, func() error { return s.out.encoded(e) })
	}
}

// send writes one frame; id is the sequence of the cursor the client holds
// once it has the frame, in the session's epoch.
func (s *session) send(kind string, id uint64, b []byte) error {
	if err := s.out.frame(kind, wire.Cursor{Epoch: s.epoch, Seq: id}, b); err != nil {
		s.close(0, "")
		return err
	}
	return nil
}

func (s *session) writePing() error {
	if err := s.out.keepAlive(); err != nil {
		s.close(0, "")
		return err
	}
	return nil
}

// finish ends the connection with the cause chosen by close and forgets
// the session.
func (s *session) finish() {
	s.ping.Stop()
	s.close(0, "") // no-op when a cause was set
	s.mu.Lock()
	code, reason := s.code, s.reason
	s.queue, s.spare = nil, nil
	s.mu.Unlock()
	if code != 0 {
		reason = fmt.Sprintf(reason, s.pos)
	}
	s.out.end(code, reason, s.pos)
	s.ls.remove(s)
}

// wants reports whether the session's filters select rec.
func (s *session) wants(rec *wire.Record) bool {
	if !s.req.all {
		found := false
		for _, c := range s.req.channels {
			if c == rec.Channel {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if s.req.topics != nil && !s.req.topics.match(rec.Topic) {
		return false
	}
	if s.req.sinceTime.IsZero() {
		return true
	}
	t := rec.Until
	if t.IsZero() {
		t = rec.Received
	}
	return t.After(s.req.sinceTime)
}
