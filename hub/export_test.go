package hub

import "context"

// SweptShards is the periodic sweep's memory of the shards, for tests.
type SweptShards = [Shards]sweptShard

// SweepDue runs one pass of the periodic sweep, for tests.
func SweepDue(ctx context.Context, h *Hub, swept *SweptShards) error { return h.sweepDue(ctx, swept) }

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

// ChannelMemory is channelMemory, for tests.
type ChannelMemory = channelMemory

// ChannelMemory reports what the hub holds per channel, for tests.
func (h *Hub) ChannelMemory() ChannelMemory { return h.channelMemory() }

// CheckChannel is checkChannel, for tests.
func (h *Hub) CheckChannel(ch Channel) (Channel, error) { return h.checkChannel(ch) }

// FeedChannel is feedChannel, for tests.
func (h *Hub) FeedChannel(topic string) string { return h.feedChannel(topic) }

// SweepOnce is sweepOnce, for tests.
func (h *Hub) SweepOnce(ctx context.Context) { h.sweepOnce(ctx) }
