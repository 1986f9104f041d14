package delivery

import (
	"fmt"
	"strings"

	"github.com/rshub/rshub/hub"
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
func recordID(rec hub.Record) string {
	if rec.Epoch == "" {
		return ""
	}
	return wire.Cursor{Epoch: rec.Epoch, Seq: rec.Seq}.String()
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
