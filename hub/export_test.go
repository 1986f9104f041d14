package hub

import "context"

// SweptShards is the periodic sweep's memory of the shards, for tests.
type SweptShards = sweepState

// SweepDue runs one pass of the periodic sweep, for tests.
func SweepDue(ctx context.Context, h *Hub, swept *SweptShards) error { return h.sweepDue(ctx, swept) }

// NewSweptShards returns the memory of a sweep handed the listings of act
// when it is a listing holder, for tests.
func NewSweptShards(act Activator) *SweptShards { return newSweepState(act) }

// Names the package keeps to itself, for its external tests.
const (
	ChannelIdle         = channelIdle
	DefaultMaxClockSkew = defaultMaxClockSkew
)

var (
	CheckNewChannelName = checkNewChannelName
	DefaultLeasePolicy  = defaultLeasePolicy
	ParseSubscription   = parseSubscription
)

// ChannelMemory counts what the hub keeps in memory per channel.
type ChannelMemory struct {
	States      int // working channel states
	Dirty       int // of which changed since their last write to the store
	Definitions int // cached channel definitions
	TopicChecks int // verified topics
	Fetches     int // validators of fetched topics
	Locks       int // channels with a request in flight
}

// ChannelMemory reports what the hub holds per channel, for tests.
func (h *Hub) ChannelMemory() ChannelMemory {
	h.mu.Lock()
	defer h.mu.Unlock()
	return ChannelMemory{
		States:      len(h.states),
		Dirty:       len(h.dirty),
		Definitions: len(h.chanCache),
		TopicChecks: len(h.topicOK),
		Fetches:     len(h.fetched),
		Locks:       h.chanLocks.size(),
	}
}

// CheckChannel is checkChannel, for tests.
func (h *Hub) CheckChannel(ch Channel) (Channel, error) { return h.checkChannel(ch) }

// FeedChannel is feedChannel, for tests.
func (h *Hub) FeedChannel(topic string) string { return h.feedChannel(topic) }

// SweepOnce expires every subscription whose lease has ended, reading one
// shard at a time, for tests.
func (h *Hub) SweepOnce(ctx context.Context) {
	for _, n := range h.sweepShards() {
		if ctx.Err() != nil {
			return
		}
		if _, err := h.sweepShard(ctx, n); err != nil {
			h.logger.Error("lease sweep", "err", err)
		}
	}
}

// size reports how many keys have a holder or a waiter.
func (k *keyedLocks[K]) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}

// PrepareMercure makes the incoming record of a Mercure publish's data to
// ch, with the checks a publish makes before its commit, and returns the
// function that commits it, for tests that put something between the two.
func (h *Hub) PrepareMercure(ctx context.Context, ch Channel, data []byte) (func() (PublishResult, error), error) {
	in, err := h.mercureUpdate(ctx, ch, data)
	if err != nil {
		return nil, err
	}
	return func() (PublishResult, error) { return h.commit(ctx, in) }, nil
}

// SubscriptionLockRefs is how many hold or wait for the lock of
// subscription id (lockSub), for tests.
func (h *Hub) SubscriptionLockRefs(id string) int {
	h.subLocks.mu.Lock()
	defer h.subLocks.mu.Unlock()
	if l := h.subLocks.m[id]; l != nil {
		return l.refs
	}
	return 0
}
