package hub

import (
	"slices"
	"time"
)

// heldAttempts are the records of one subscription waiting for a write.
// A flush empties it and keeps it, its array of compact records reused by
// the next records, until a flush finds it still empty (take) and drops
// it.
type heldAttempts struct {
	id string // the SubID it is held under
	// list is the records, oldest first, while each is compact; from the
	// first that is not, they are all in full instead (list empty) until
	// the next write.
	list    []heldRecord
	full    []Attempt
	since   time.Time // when the oldest was taken; when emptied, while empty
	stamp   uint64    // counts the times since was set (attemptShard.byAge)
	failed  bool      // one of them is not a first attempt that delivered
	dropped bool      // no longer in its shard: a SubAttempts holding it looks again
}

// len is the number of records held.
func (h *heldAttempts) len() int { return len(h.list) + len(h.full) }

// add appends a, compact when it can be and every record held is.
func (h *heldAttempts) add(a Attempt) {
	if c, ok := compact(a, h.id); ok && len(h.full) == 0 {
		h.list = append(h.list, c)
		return
	}
	if len(h.list) > 0 {
		h.full = slices.Grow(h.full, len(h.list)+1)
		for _, c := range h.list {
			h.full = append(h.full, c.attempt(h.id))
		}
		h.list = h.list[:0]
	}
	h.full = append(h.full, a)
}

// trim keeps the newest n records; it returns how many it removed.
func (h *heldAttempts) trim(n int) int {
	if len(h.full) > 0 {
		return trimTo(&h.full, n)
	}
	return trimTo(&h.list, n)
}

// trimTo keeps the newest n of *l at its start and returns how many it
// removed.
func trimTo[T any](l *[]T, n int) int {
	k := copy(*l, (*l)[max(0, len(*l)-n):])
	removed := len(*l) - k
	clear((*l)[k:])
	*l = (*l)[:k]
	return removed
}

// appendTo appends the newest n records held to batch, in full.
func (h *heldAttempts) appendTo(batch []Attempt, n int) []Attempt {
	if len(h.full) > 0 {
		return append(batch, h.full[max(0, len(h.full)-n):]...)
	}
	for _, c := range h.list[max(0, len(h.list)-n):] {
		batch = append(batch, c.attempt(h.id))
	}
	return batch
}

// empty removes every record held, keeping the array of compact ones for
// the next; that of full ones, seldom needed again, is let go.
func (h *heldAttempts) empty() {
	h.list, h.full = h.list[:0], nil
}

// heldRecord is a first attempt that delivered, its time in UTC, as a
// subscription's held records keep it: 32 bytes and no pointer, where an
// Attempt is 136 bytes the collector scans. A hub delivering to tens of
// thousands of subscriptions holds hundreds of thousands of them.
type heldRecord struct {
	sec     int64 // Time, Unix seconds
	seq     uint64
	latency float64 // LatencyMS
	nsec    int32   // Time, nanoseconds within sec
	status  int32
}

// compact returns a as a heldRecord of subscription id, or false when a
// holds more than one keeps.
func compact(a Attempt, id string) (heldRecord, bool) {
	if a.SubID != id || a.Attempt != 1 || a.Status < 200 || a.Status > 299 || a.Error != "" || a.Body != "" ||
		a.Headers != nil || !a.NextRetry.IsZero() || a.Time.Location() != time.UTC {
		return heldRecord{}, false
	}
	return heldRecord{sec: a.Time.Unix(), nsec: int32(a.Time.Nanosecond()), seq: a.Seq, latency: a.LatencyMS, status: int32(a.Status)}, true
}

// attempt is c as the Attempt of subscription id it was made from.
func (c heldRecord) attempt(id string) Attempt {
	return Attempt{SubID: id, Time: time.Unix(c.sec, int64(c.nsec)).UTC(), Seq: c.seq, Attempt: 1, Status: int(c.status), LatencyMS: c.latency}
}

// due reports whether h is written by a flush at now, holding for hold.
func (h *heldAttempts) due(now time.Time, hold time.Duration) bool {
	return h.failed || now.Sub(h.since) >= hold
}
