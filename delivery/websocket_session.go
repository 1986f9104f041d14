package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

// wsFrame is a live frame queued for a session: a message encoded once for
// every session that receives it, and the cursor the session reaches by
// writing it.
type wsFrame struct {
	pos uint64
	pm  *websocket.PreparedMessage
}

// wsSession is one WebSocket connection. Its writer goroutine replays the
// log from the session's cursor, joins the live fan-out once caught up and
// then writes the frames the dispatcher queues; its reader goroutine reads
// control frames. Only the writer writes data frames.
type wsSession struct {
	ws         *WebSockets
	conn       *websocket.Conn
	req        wsRequest
	ctx        context.Context // ends when the session closes for any reason
	cancel     context.CancelFunc
	wake       chan struct{} // capacity 1: the dispatcher queued frames
	readerDone chan struct{}
	ping       *time.Ticker
	pos        uint64 // writer only: the client has every wanted record up to here
	fails      int    // writer only: log reads failed in a row during replay

	mu     sync.Mutex
	queue  []wsFrame
	spare  []wsFrame // the drained queue's backing array, reused for the next batch
	ended  bool
	code   int    // close code to send, 0 for none
	reason string // close reason, with one %d for the resume cursor

	cursor uint64 // guarded by ws.mu: the dispatcher skips records up to here
	live   bool   // guarded by ws.mu: in the live fan-out
}

func newWSSession(ws *WebSockets, conn *websocket.Conn, req wsRequest) *wsSession {
	ctx, cancel := context.WithCancel(context.Background())
	return &wsSession{
		ws: ws, conn: conn, req: req, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), readerDone: make(chan struct{}),
	}
}

// close ends the session; the first caller chooses the close frame (code 0
// sends none).
func (s *wsSession) close(code int, reason string) {
	s.mu.Lock()
	if !s.ended {
		s.ended, s.code, s.reason = true, code, reason
	}
	s.mu.Unlock()
	s.cancel()
}

// write runs the session: replay, the live frame, then live frames and
// pings until the session ends.
func (s *wsSession) write() {
	s.ping = time.NewTicker(s.ws.cfg.PingInterval)
	defer s.finish()
	err := s.replay()
	s.recovered() // a session that ends stalled stalls nothing any more
	if err != nil {
		if s.ctx.Err() == nil {
			s.ws.cfg.Logger.Warn("websocket: replay failed", "err", err, "remote", s.conn.RemoteAddr())
			s.close(wire.CloseInternalError, "replay failed; resume with since=%d")
		}
		return
	}
	if s.send(wire.LiveFrame(s.pos)) != nil {
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
func (s *wsSession) writeQueued() error {
	// two queues take turns, so a steady stream of frames allocates nothing
	s.mu.Lock()
	frames := s.queue
	s.queue, s.spare = s.spare, nil
	s.mu.Unlock()
	defer func() {
		clear(frames) // drop the frames' messages
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
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.ws.cfg.WriteTimeout))
		if err := s.conn.WritePreparedMessage(f.pm); err != nil {
			s.close(0, "")
			return err
		}
		s.pos = f.pos
	}
	return nil
}

// send writes one text frame.
func (s *wsSession) send(b []byte) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.ws.cfg.WriteTimeout))
	if err := s.conn.WriteMessage(websocket.TextMessage, b); err != nil {
		s.close(0, "")
		return err
	}
	return nil
}

func (s *wsSession) writePing() error {
	if err := s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.ws.cfg.WriteTimeout)); err != nil {
		s.close(0, "")
		return err
	}
	return nil
}

// finish sends the close frame chosen by close, waits a while for the
// client's answer, and releases the connection.
func (s *wsSession) finish() {
	s.ping.Stop()
	s.close(0, "") // no-op when a cause was set
	s.mu.Lock()
	code, reason := s.code, s.reason
	s.queue, s.spare = nil, nil
	s.mu.Unlock()
	if code != 0 {
		msg := websocket.FormatCloseMessage(code, fmt.Sprintf(reason, s.pos))
		deadline := time.Now().Add(s.ws.cfg.WriteTimeout)
		if s.conn.WriteControl(websocket.CloseMessage, msg, deadline) == nil {
			t := time.NewTimer(time.Until(deadline))
			select { // the client answers with its close frame
			case <-s.readerDone:
			case <-t.C:
			}
			t.Stop()
		}
	}
	_ = s.conn.Close()
	<-s.readerDone
	s.ws.remove(s)
}

// wants reports whether the session's filters select rec.
func (s *wsSession) wants(rec *hub.Record) bool {
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
func (s *wsSession) replay() error {
	select {
	case <-s.ws.ready:
	case <-s.ctx.Done():
		return s.ctx.Err()
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
	for {
		d0 := s.ws.position()
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
		if s.ws.join(s, cursor) {
			s.pos = cursor
			return nil
		}
	}
}

// replayFrom writes the wanted records after cursor until the log has no
// more and returns the last sequence it looked at.
func (s *wsSession) replayFrom(cursor uint64) (uint64, error) {
	log := s.ws.cfg.Log
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
			return cursor, fmt.Errorf("websocket: replay from %d: %w: %w", cursor+1, errLog, err)
		}
		if rec.Seq > cursor+1 {
			if err := s.checkHole(channel, cursor, rec.Seq); err != nil {
				return cursor, err
			}
		}
		cursor = rec.Seq
		if !s.wants(&rec) {
			continue
		}
		b, err := notificationJSON(rec, s.req.raw)
		if err != nil {
			return cursor, err
		}
		if err := s.send(b); err != nil {
			return cursor, err
		}
		s.pos = rec.Seq
	}
}

// waitOut reports whether err is the log's and the session, having waited
// a backoff while answering pings, should try again.
func (s *wsSession) waitOut(err error) bool {
	if !errors.Is(err, errLog) || s.ctx.Err() != nil {
		return false
	}
	if s.fails == 0 {
		s.ws.stalls.add(err)
	} else {
		s.ws.stalls.update(err)
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
func (s *wsSession) recovered() {
	if s.fails > 0 {
		s.fails = 0
		s.ws.stalls.remove()
	}
}

// checkHole sends a gap frame when the log no longer holds records between
// cursor and next.
func (s *wsSession) checkHole(channel string, cursor, next uint64) error {
	to := next - 1
	if channel != "" { // other channels' records fill the hole unless retention removed them
		first, _, err := s.ws.cfg.Log.Bounds(s.ctx)
		if err != nil {
			return fmt.Errorf("websocket: bounds: %w: %w", errLog, err)
		}
		if first <= cursor+1 {
			return nil
		}
		to = min(to, first-1)
	}
	return s.send(wire.GapFrame(cursor+1, to, "records removed from the log by retention before they could be replayed"))
}

// startCursor turns since, since_time or nothing into the sequence after
// which replay starts, sending a gap frame first when the cursor is older
// than what the log holds.
func (s *wsSession) startCursor() (uint64, error) {
	log := s.ws.cfg.Log
	first, last, err := log.Bounds(s.ctx)
	if err != nil {
		return 0, fmt.Errorf("websocket: bounds: %w: %w", errLog, err)
	}
	switch {
	case s.req.hasSince:
		cursor := s.req.since
		if first > 0 && cursor+1 < first {
			msg := fmt.Sprintf("since=%d is older than the log's retention: replay starts at %d", cursor, first)
			if err := s.send(wire.GapFrame(cursor+1, first-1, msg)); err != nil {
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
			if err := s.send(wire.GapFrame(1, first-1, msg)); err != nil {
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
			return 0, fmt.Errorf("websocket: since_time search: %w: %w", errLog, err)
		}
		if rec.Received.After(threshold) {
			found, hi = rec.Seq, mid
		} else {
			lo = rec.Seq + 1
		}
	}
	return found - 1, nil
}
