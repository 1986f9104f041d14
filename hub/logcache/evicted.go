package logcache

import "slices"

// maxEvictedChannels bounds the channels an evictedIndex remembers.
const maxEvictedChannels = 1 << 16

// evictedIndex remembers, per channel, the sequence of the channel's last
// record evicted from the ring. The follower reads every record of the log
// from its start on, so a channel whose last evicted record is below seq
// has no record between seq and the ring's first: a reader asking for the
// channel's records from seq is answered from the ring even though seq is
// before it. A queue whose channel is published to once every few minutes
// thus finds its next record without a read of the log, however much of
// other channels went through the ring meanwhile.
//
// The index holds at most maxEvictedChannels channels; when it is full it
// forgets the half with the oldest evictions and raises floor to the
// newest of them, so that a channel it does not hold counts as evicted at
// floor: answers stay exact, only a channel quiet for longer than the
// forgotten ones goes back to the log.
type evictedIndex struct {
	last  map[string]uint64
	floor uint64 // every evicted record of a channel not in last is at or below floor
}

// reset empties the index for a follower starting at seq: records before
// seq were never seen.
func (x *evictedIndex) reset(seq uint64) {
	x.last, x.floor = map[string]uint64{}, seq-min(seq, 1)
}

// note records the eviction of channel's record seq; sequences are noted
// in increasing order.
func (x *evictedIndex) note(channel string, seq uint64) {
	if x.last == nil {
		x.last = map[string]uint64{}
	}
	if _, ok := x.last[channel]; !ok && len(x.last) >= maxEvictedChannels {
		x.forgetOldest()
	}
	x.last[channel] = seq
}

// forgetOldest drops the half of the channels with the oldest evictions.
func (x *evictedIndex) forgetOldest() {
	seqs := make([]uint64, 0, len(x.last))
	for _, s := range x.last {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	cut := seqs[len(seqs)/2]
	for ch, s := range x.last {
		if s <= cut {
			delete(x.last, ch)
		}
	}
	x.floor = max(x.floor, cut)
}

// clear reports whether no record of channel at or after seq has been
// evicted, or was before the follower started: the ring alone then holds
// every such record the follower has seen.
func (x *evictedIndex) clear(channel string, seq uint64) bool {
	last, ok := x.last[channel]
	if !ok {
		last = x.floor
	}
	return seq > last
}
