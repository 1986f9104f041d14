package hub

import (
	"slices"
	"strings"
	"sync"
)

// ChannelIndex answers channel definitions by topic from a store's
// channel listing of one channels version (ChannelsVersion), so that a hub
// publishing to many channels it has not read yet finds each one without
// a read of the store: a store keeps its last listing under the version it
// was read at (the follower engine lists the channels every few seconds),
// and the index takes a copy of it once per version, at the first lookup,
// and searches it by topic (a listing is ordered by topic). It holds one
// version at a time. The zero value is ready to use and safe for
// concurrent use.
type ChannelIndex struct {
	mu  sync.Mutex
	ver string
	chs []Channel // nil: no listing held
}

// Lookup returns the channel of topic in the listing of version ver. list
// returns a copy of the listing the store holds under ver, if it holds
// one; it is called only when the index holds another version. ok is
// false when there is no listing of ver or topic is not in it: the caller
// reads the store (a channel put since the listing may be newer than ver).
func (x *ChannelIndex) Lookup(ver, topic string, list func(ver string) ([]Channel, bool)) (Channel, bool) {
	if ver == "" {
		return Channel{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.chs == nil || x.ver != ver {
		chs, ok := list(ver)
		if !ok {
			return Channel{}, false
		}
		x.ver, x.chs = ver, chs
	}
	i, ok := slices.BinarySearchFunc(x.chs, topic, func(ch Channel, t string) int { return strings.Compare(ch.Topic, t) })
	if !ok {
		return Channel{}, false
	}
	return x.chs[i], true
}
