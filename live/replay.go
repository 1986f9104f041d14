package live

// A session's replay: from its starting cursor through the log, waiting
// out the log's failures, to the point where it joins the live fan-out.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

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
