package live

import (
	"fmt"
	"strings"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// epochLog is a log with an identity (wire.Cursor): jslog.Log, and
// logcache.Cache in front of one.
type epochLog interface {
	Epoch() string
}

// logEpoch returns log's identity, "" when it has none.
func logEpoch(log hub.Log) string {
	if e, ok := log.(epochLog); ok {
		return e.Epoch()
	}
	return ""
}

// recordID is the id of rec's notification frame: its cursor with the
// log's epoch, "" for a log without one (the frame's seq is then the
// cursor).
func recordID(rec wire.Record) string {
	if rec.Epoch == "" {
		return ""
	}
	return wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq}.String()
}

// aheadGrace is how long a session waits for the log to reach a cursor
// ahead of its last sequence before it resets the cursor: another hub of a
// cluster may have sent the record a moment before this one saw it.
const aheadGrace = 500 * time.Millisecond

// awaitLog returns the log's bounds once its last sequence reaches seq, or
// after aheadGrace; first and last are the bounds already read. A cursor
// of another epoch is not waited for: no wait makes it this log's.
func (s *session) awaitLog(seq, first, last uint64) (uint64, uint64, error) {
	if last >= seq || (s.req.epoch != "" && s.req.epoch != s.epoch) {
		return first, last, nil
	}
	f, l := first, last
	_, err := logcache.Await(s.ctx, s.ls.cfg.Log, aheadGrace, nil, func(bool) (bool, error) {
		var err error
		if f, l, err = s.ls.cfg.Log.Bounds(s.ctx); err != nil {
			return false, fmt.Errorf("session: bounds: %w: %w", errLog, err)
		}
		return l >= seq, nil
	})
	if err != nil {
		return 0, 0, err
	}
	return f, l, nil
}

// reset tells the client that its cursor names no position of the log
// holding first..last (why wraps wire.ErrCursorReset) and returns the
// cursor replay goes on from: before the log's first record. Going on from
// the start, not the end, gives a client whose cursor came from a rebuilt
// log everything the new log holds: a mirror misses nothing, a dashboard
// shows the history it would show a new visitor.
func (s *session) reset(first, last uint64, why error) (uint64, error) {
	since := max(first, 1) - 1
	msg := strings.TrimPrefix(why.Error(), wire.ErrCursorReset.Error()+": ") +
		fmt.Sprintf("; replay starts after %s, at the log's first record", wire.Cursor{Epoch: s.epoch, Seq: since})
	if err := s.send(wire.FrameReset, since, wire.ResetFrame(s.epoch, first, last, msg)); err != nil {
		return 0, err
	}
	return since, nil
}
