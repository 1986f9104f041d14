package hub

import "sync"

// ChannelIndex answers channel definitions by topic from a store's
// channel listing of one channels version (ChannelsVersion), so that a hub
// publishing to many channels it has not read yet finds each one without
// a read of the store: a store keeps its last listing under the version it
// was read at (the follower engine lists the channels every few seconds),
// and the index is built from it once per version, at the first lookup.
// It holds one version at a time. The zero value is ready to use and safe
// for concurrent use.
type ChannelIndex struct {
	mu      sync.Mutex
	ver     string
	byTopic map[string]Channel // nil: no listing indexed
}

// Lookup returns the channel of topic in the listing of version ver. list
// returns the listing the store holds under ver, if it holds one; it is
// called only when the index holds another version. ok is false when
// there is no listing of ver or topic is not in it: the caller reads the
// store (a channel put since the listing may be newer than ver).
func (x *ChannelIndex) Lookup(ver, topic string, list func(ver string) ([]Channel, bool)) (Channel, bool) {
	if ver == "" {
		return Channel{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byTopic == nil || x.ver != ver {
		chs, ok := list(ver)
		if !ok {
			return Channel{}, false
		}
		x.ver, x.byTopic = ver, make(map[string]Channel, len(chs))
		for _, ch := range chs {
			x.byTopic[ch.Topic] = ch
		}
	}
	ch, ok := x.byTopic[topic]
	return ch, ok
}
