package pull

import (
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// list is one Change List as the index keeps it: its bounds and when its
// last notification was received (its Last-Modified).
type list struct {
	changefeed.ListBounds
	Modified time.Time
}

// chanLists is the list index of one channel: only bounds, never entries.
type chanLists struct {
	rot      *changefeed.Rotator
	closed   []list    // anchored closed lists the log still holds, chronological
	openMod  time.Time // Received of the open list's last notification
	openGone bool      // retention removed the open list's first notification
	skipped  int       // notifications left out (overlaps, replays)
	warmed   uint64    // FirstSeq of the newest closed list rendered ahead (warm.go)
}

// open returns the open list when it is served: anchored and still held.
func (c *chanLists) open() (list, bool) {
	b, ok := c.rot.Open()
	if !ok || !b.Anchored || c.openGone {
		return list{}, false
	}
	return list{ListBounds: b, Modified: c.openMod}, true
}

// find returns the served list whose first sequence is seq.
func (c *chanLists) find(seq uint64) (list, bool) {
	if o, ok := c.open(); ok && o.FirstSeq == seq {
		return o, true
	}
	lo, hi := 0, len(c.closed)
	for lo < hi {
		m := (lo + hi) / 2
		if c.closed[m].FirstSeq < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(c.closed) && c.closed[lo].FirstSeq == seq {
		return c.closed[lo], true
	}
	return list{}, false
}

// index is the list index of every channel and the position in the log it
// has read up to. It does no I/O; Sync feeds it.
//
// Its memory follows the log, not the channels ever seen: chans holds, per
// channel with records read, the bounds of the lists the log still holds
// (prune drops the rest) and the rotator's position: about 1.3 KB per
// channel with one closed and one open list, the channel listing included
// (BenchmarkPull_ChannelHeap). It is not dropped for idle channels: the
// rotator's cuts depend on every notification since the channel's first,
// so rebuilding it from the records retention left would not give the
// same lists. closing is a subset of chans; the framework maps are bounded
// by FrameworkHorizon.
type index struct {
	rot     changefeed.Rotation
	started bool      // the first Sync has looked at the log's bounds
	whole   bool      // the log held its first record when first read
	startAt time.Time // Received of the first record read, when not whole
	cursor  uint64    // last sequence applied
	first   uint64    // first sequence the log holds, as last seen
	chans   map[string]*chanLists
	closing map[string]struct{} // channels with lists closed since the last warm pass (warm.go)
	fw      frameworkState      // framework notifications, see framework.go
}

func newIndex(rot changefeed.Rotation) index {
	return index{rot: rot, chans: map[string]*chanLists{}, closing: map[string]struct{}{}}
}

// apply feeds one record. created is the channel's creation time from the
// store (zero when unknown): a channel created after the first record this
// process read has its whole history in the log.
func (x *index) apply(rec wire.Record, entries int, created time.Time) {
	x.cursor = max(x.cursor, rec.Seq)
	if rec.From.IsZero() || rec.Until.IsZero() { // not a ResourceSync notification
		return
	}
	if !x.whole && x.startAt.IsZero() {
		x.startAt = rec.Received
	}
	c := x.chans[rec.Channel]
	if c == nil {
		whole := x.whole || (!created.IsZero() && !x.startAt.IsZero() && created.After(x.startAt))
		c = &chanLists{rot: changefeed.NewRotator(x.rot, whole)}
		x.chans[rec.Channel] = c
	}
	closed, cut := c.rot.Add(changefeed.Notice{Seq: rec.Seq, From: rec.From, Until: rec.Until, Entries: entries})
	switch {
	case cut == changefeed.Skipped:
		c.skipped++
		return
	case cut.Closes():
		if closed.Anchored && !c.openGone && closed.FirstSeq >= x.first {
			c.closed = append(c.closed, list{ListBounds: closed, Modified: c.openMod})
			x.closing[rec.Channel] = struct{}{}
		}
		c.openGone = false
	}
	c.openMod = rec.Received
}

// prune drops what retention removed: every list whose first record is
// before first, the first sequence the log still holds.
func (x *index) prune(first uint64) {
	if first <= x.first {
		return
	}
	x.first = first
	for _, c := range x.chans {
		n := 0
		for n < len(c.closed) && c.closed[n].FirstSeq < first {
			n++
		}
		if n > 0 {
			c.closed = append(c.closed[:0:0], c.closed[n:]...)
		}
		if b, ok := c.rot.Open(); ok && b.FirstSeq < first {
			c.openGone = true
		}
	}
}
