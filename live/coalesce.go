package live

import (
	"errors"
	"fmt"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/wire"
)

// coalescedReplay sends the session's channel's records after cursor, up to
// the log's last sequence when it starts, as coalesced notifications
// (wire.ParamSessionCoalesce): one per run of consecutive change notifications,
// whose frame seq is the run's last sequence. A record that does not
// coalesce goes as it is; a run that does not make a valid notification
// ends coalescing there, and the usual replay sends it record by record.
// It returns the cursor reached; a log error wraps errLog, and the caller
// goes on from the returned cursor after waiting it out.
func (s *session) coalescedReplay(cursor uint64) (uint64, error) {
	log := s.ls.cfg.Log
	channel := s.req.channels[0]
	_, seam, err := log.Bounds(s.ctx)
	if err != nil {
		return cursor, fmt.Errorf("session: coalesce: %w: %w", errLog, err)
	}
	var filter *changefeed.Filter
	if !s.req.filter.IsZero() {
		f := s.req.filter
		filter = &f
	}
	for cursor < seam {
		select {
		case <-s.ping.C:
			if err := s.writePing(); err != nil {
				return cursor, err
			}
		default:
		}
		run, err := logcache.CoalesceLog(s.ctx, log, channel, cursor+1, logcache.CoalesceOptions{Filter: filter, To: seam})
		switch {
		case errors.Is(err, logcache.ErrNotCoalescible):
			return cursor, nil
		case err != nil:
			return cursor, fmt.Errorf("session: coalesce from %d: %w: %w", cursor+1, errLog, err)
		case run.Records == 0 && run.End:
			return seam, nil
		case run.Records == 0:
			// the record at run.Next does not coalesce: it goes as it is
			rec, err := log.Next(s.ctx, channel, run.Next)
			if err != nil {
				return cursor, fmt.Errorf("session: replay %d: %w: %w", run.Next, errLog, err)
			}
			b, err := notificationJSON(rec, s.req.raw, s.req.filter)
			if err != nil {
				return cursor, err
			}
			if err := s.send(wire.FrameNotification, rec.Seq, b); err != nil {
				return cursor, err
			}
			s.pos, cursor = rec.Seq, rec.Seq
			continue
		}
		// the run's entries are filtered already
		b, err := notificationJSON(run.Record(channel), s.req.raw, changefeed.Filter{})
		if err != nil {
			return cursor, err
		}
		if err := s.send(wire.FrameNotification, run.Last, b); err != nil {
			return cursor, err
		}
		s.pos = run.Last
		if run.End {
			return seam, nil
		}
		cursor = run.Next - 1
	}
	return cursor, nil
}
