package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/loophealth"
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

// errLog marks the errors of the log, which a session in replay waits out.
var errLog = errors.New("log unavailable")

// replay writes every wanted record after the starting cursor, then joins
// the live fan-out at a point where nothing was missed and nothing will
// come twice: the dispatcher's position is read before the log says
// "nothing more", and the join succeeds only if the dispatcher has not
// moved past the session's cursor since. While the log fails, replay waits
// with backoff (pinging the client) and goes on from where it was.
func (s *session) replay() error {
	select {
	case <-s.ls.ready:
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
	// the cursor is found by reading the log as the session sees it (a
	// since_time is a search over it): wait until that view holds what the
	// log held when the session began, as the dispatcher's start did for
	// the first sessions
	if _, last, err := s.ls.cfg.Log.Bounds(s.ctx); err == nil && last > 0 {
		s.awaitVisible(last)
	}
	var cursor uint64
	for {
		var err error
		if cursor, err = s.startCursor(); err == nil {
			break
		}
		if !s.waitOut(err) {
			return err
		}
	}
	s.pos = cursor
	if cursor < s.last {
		s.awaitVisible(s.last)
	}
	for s.req.coalesce {
		next, err := s.coalescedReplay(cursor)
		cursor = next
		if err == nil {
			break
		}
		if !s.waitOut(err) {
			return err
		}
	}
	for {
		d0 := s.ls.position()
		next, err := s.replayFrom(cursor)
		cursor = next
		if err != nil {
			if !s.waitOut(err) {
				return err
			}
			continue
		}
		s.recovered()
		cursor = max(cursor, d0)
		if s.ls.join(s, cursor) {
			s.pos = cursor
			return nil
		}
	}
}

// awaitVisible waits until the log as the session reads it (a cache in
// front of the log may lag the log's Bounds) holds seq, so that every
// record the log held when the session started is replayed before the live
// frame, whatever the live fan-out has reached. It waits at most
// dispatchPoll, and not past a failing read: replay goes on either way,
// missing nothing.
func (s *session) awaitVisible(seq uint64) {
	_, _ = logcache.Await(s.ctx, s.ls.cfg.Log, dispatchPoll, s.ping.C, func(ping bool) (bool, error) {
		if ping && s.writePing() != nil {
			return true, nil
		}
		visible, err := logcache.Visible(s.ctx, s.ls.cfg.Log, seq)
		return visible || err != nil, nil
	})
}

// replayFrom writes the wanted records after cursor until the log has no
// more and returns the last sequence it looked at.
func (s *session) replayFrom(cursor uint64) (uint64, error) {
	log := s.ls.cfg.Log
	channel := ""
	if !s.req.all && len(s.req.channels) == 1 {
		channel = s.req.channels[0]
	}
	for {
		select {
		case <-s.ping.C:
			if err := s.writePing(); err != nil {
				return cursor, err
			}
		default:
		}
		rec, err := log.Next(s.ctx, channel, cursor+1)
		if errors.Is(err, hub.ErrNotFound) {
			return cursor, nil
		}
		if err != nil {
			return cursor, fmt.Errorf("session: replay from %d: %w: %w", cursor+1, errLog, err)
		}
		if rec.Seq > cursor+1 {
			if err := s.checkHole(channel, cursor, rec.Seq); err != nil {
				return cursor, err
			}
		}
		cursor = rec.Seq
		if !s.wants(&rec) || s.hides(&rec) {
			continue
		}
		if rw, own := s.out.(recordWriter); own {
			if err := rw.record(&rec, wire.Cursor{Epoch: s.epoch, Seq: rec.Seq}); err != nil {
				s.close(0, "")
				return cursor, err
			}
			s.pos = rec.Seq
			continue
		}
		b, err := notificationJSON(rec, s.req.raw, s.req.filter)
		if err != nil {
			return cursor, err
		}
		if err := s.send(wire.FrameNotification, rec.Seq, b); err != nil {
			return cursor, err
		}
		s.pos = rec.Seq
	}
}

// waitOut reports whether err is the log's and the session, having waited
// a backoff while answering pings, should try again.
func (s *session) waitOut(err error) bool {
	if !errors.Is(err, errLog) || s.ctx.Err() != nil {
		return false
	}
	if s.fails == 0 {
		s.ls.stalls.add(err)
	} else {
		s.ls.stalls.update(err)
	}
	s.fails++
	t := time.NewTimer(loophealth.Delay(s.fails))
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return false
		case <-t.C:
			return true
		case <-s.ping.C:
			if s.writePing() != nil {
				return false
			}
		}
	}
}

// recovered ends the session's stall, if any.
func (s *session) recovered() {
	if s.fails > 0 {
		s.fails = 0
		s.ls.stalls.remove()
	}
}

// checkHole sends a gap frame when the log no longer holds records between
// cursor and next.
func (s *session) checkHole(channel string, cursor, next uint64) error {
	to := next - 1
	if channel != "" { // other channels' records fill the hole unless retention removed them
		first, _, err := s.ls.cfg.Log.Bounds(s.ctx)
		if err != nil {
			return fmt.Errorf("session: bounds: %w: %w", errLog, err)
		}
		if first <= cursor+1 {
			return nil
		}
		to = min(to, first-1)
	}
	return s.send(wire.FrameGap, to, wire.GapFrame(cursor+1, to, "records removed from the log (retention), or quarantined as undecodable, before they could be replayed"))
}

// startCursor turns since, since_time or nothing into the sequence after
// which replay starts, sending a gap frame first when the cursor is older
// than what the log holds.
func (s *session) startCursor() (uint64, error) {
	log := s.ls.cfg.Log
	first, last, err := log.Bounds(s.ctx)
	if err != nil {
		return 0, fmt.Errorf("session: bounds: %w: %w", errLog, err)
	}
	s.epoch, s.last = logEpoch(log), last
	switch {
	case s.req.hasSince:
		cursor := s.req.since
		if first, last, err = s.awaitLog(cursor, first, last); err != nil {
			return 0, err
		}
		if err := wire.CheckCursor(wire.Cursor{Epoch: s.req.epoch, Seq: cursor}, s.epoch, last); err != nil {
			return s.reset(first, last, err)
		}
		if first > 0 && cursor+1 < first {
			msg := fmt.Sprintf("since=%d is older than the log's retention: replay starts at %d", cursor, first)
			if err := s.send(wire.FrameGap, first-1, wire.GapFrame(cursor+1, first-1, msg)); err != nil {
				return 0, err
			}
			cursor = first - 1
		}
		return cursor, nil
	case !s.req.sinceTime.IsZero():
		cursor, err := cursorForTime(s.ctx, log, s.req.sinceTime, first, last)
		if err != nil {
			return 0, err
		}
		if first > 1 && cursor+1 <= first {
			msg := fmt.Sprintf("since_time is older than the log's retention: records before %d were removed", first)
			if err := s.send(wire.FrameGap, first-1, wire.GapFrame(1, first-1, msg)); err != nil {
				return 0, err
			}
			cursor = first - 1
		}
		return cursor, nil
	default:
		return last, nil
	}
}

// cursorForTime returns the sequence before the first record received
// after t less SinceTimeSlack (last when there is none), by binary search
// over the sequences the log holds: about log2(last-first) calls to Next.
// Receipt times increase with sequences up to the hub's clock jitter,
// which the slack absorbs; wants then drops the records whose until is not
// after t.
func cursorForTime(ctx context.Context, log hub.Log, t time.Time, first, last uint64) (uint64, error) {
	threshold := t.Add(-SinceTimeSlack)
	lo, hi := max(first, 1), last+1
	found := last + 1
	for lo < hi {
		mid := lo + (hi-lo)/2
		rec, err := log.Next(ctx, "", mid)
		if errors.Is(err, hub.ErrNotFound) {
			hi = mid
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("session: since_time search: %w: %w", errLog, err)
		}
		if rec.Received.After(threshold) {
			found, hi = rec.Seq, mid
		} else {
			lo = rec.Seq + 1
		}
	}
	return found - 1, nil
}
