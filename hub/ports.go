package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/wire"
)

// Log is the durable, ordered history of notifications. Sequences are
// assigned by the log, increase strictly, and are shared by all channels.
type Log interface {
	// Append stores rec durably and returns its sequence. When a record with
	// the same Key is still inside the log's deduplication window, nothing is
	// stored and Append returns the earlier sequence with dup set.
	Append(ctx context.Context, rec wire.Record) (seq uint64, dup bool, err error)
	// Next returns the first record of the channel named channel (any
	// channel when channel is "") whose sequence is at least seq, or
	// ErrNotFound when there is none yet. Records removed by retention are
	// skipped: the caller compares the returned Seq with the one it asked for.
	Next(ctx context.Context, channel string, seq uint64) (wire.Record, error)
	// Bounds returns the first and last sequence the log still holds
	// (0, 0 when empty). Records before first were removed by retention.
	Bounds(ctx context.Context) (first, last uint64, err error)
	// Changed returns a channel that is closed after the next append by any
	// writer of the log. Take it before calling Next to wait without races.
	Changed() <-chan struct{}
}

// ErrConflict is returned by a conditional append when another writer
// appended to the channel first.
var ErrConflict = errors.New("conflict: the channel moved on")

// ConditionalLog is a Log that can append on the condition that a channel's
// last record is still the one the caller saw. Several hub processes sharing
// one log use it to keep each channel's history serial; the hub uses it when
// its Log offers it.
type ConditionalLog interface {
	Log
	// AppendAfter appends rec only if the channel's last record has
	// sequence lastSeq (0: none); otherwise it fails with ErrConflict.
	AppendAfter(ctx context.Context, rec wire.Record, lastSeq uint64) (seq uint64, dup bool, err error)
}

// Store keeps the hub's state: channels and their progress, subscriptions,
// delivery cursors, dead letters, attempt logs and ownership leases. Every implementation
// passes the contract suite in hub/storetest. Its capabilities below are
// interfaces of their own for the packages that declare a narrower store
// than this one and use them when their store has them.
type Store interface {
	ChannelsVersioner
	ChannelsToucher
	ChannelListing
	CursorBatcher
	DeliveryStateReader
	ShardsLister

	PutChannel(ctx context.Context, ch Channel) error
	// Channel returns the channel with the given topic or ErrNotFound.
	Channel(ctx context.Context, topic string) (Channel, error)
	// Channels lists every channel, ordered by topic.
	Channels(ctx context.Context) ([]Channel, error)
	DeleteChannel(ctx context.Context, topic string) error

	// ChannelState returns the channel's progress, or ErrNotFound.
	ChannelState(ctx context.Context, topic string) (ChannelState, error)
	// UpdateChannelState applies fn to the current state (the zero state
	// with Topic set when none exists) and stores the result atomically,
	// retrying fn when another writer raced it. An error from fn aborts.
	UpdateChannelState(ctx context.Context, topic string, fn func(*ChannelState) error) (ChannelState, error)

	PutSubscription(ctx context.Context, s Subscription) error
	// Subscription returns the subscription with the given ID or ErrNotFound.
	Subscription(ctx context.Context, id string) (Subscription, error)
	// Subscriptions lists the subscriptions of topic (all when topic is ""), ordered by ID.
	Subscriptions(ctx context.Context, topic string) ([]Subscription, error)
	// DeleteSubscription removes the subscription, its cursor, its dead
	// letters and its attempt log.
	DeleteSubscription(ctx context.Context, id string) error
	// SubscriptionsInShard lists the subscriptions whose ShardOf(ID) is
	// shard, ordered by ID; an error when shard is not ValidShard.
	SubscriptionsInShard(ctx context.Context, shard int) ([]Subscription, error)
	// ShardVersions returns Shards numbers, one per shard, each of which
	// changes whenever a subscription of its shard is put or deleted (it may
	// also change at other times). Hubs compare them to re-list only the
	// shards that changed.
	ShardVersions(ctx context.Context) ([]uint64, error)

	// Cursor returns the delivery cursor of a subscription, or ErrNotFound.
	Cursor(ctx context.Context, subID string) (Cursor, error)
	PutCursor(ctx context.Context, subID string, c Cursor) error

	AddDeadLetter(ctx context.Context, d DeadLetter) error
	// DeadLetters lists a subscription's dead letters ordered by Seq.
	DeadLetters(ctx context.Context, subID string) ([]DeadLetter, error)
	// DeleteDeadLetter removes one dead letter; ErrNotFound when absent.
	DeleteDeadLetter(ctx context.Context, subID, id string) error

	// AddAttempts appends each attempt, bounded by ClipAttempt, to the
	// attempt log of its SubID, in the order given; a log keeps its newest
	// AttemptLogLen and expires AttemptLogTTL after its last write (a
	// store may drop attempts written AttemptLogTTL ago sooner: kvstore
	// expires each batch on its own).
	AddAttempts(ctx context.Context, as []Attempt) error
	// Attempts returns the attempt log of subID, newest first (empty, not
	// ErrNotFound, when there is none).
	Attempts(ctx context.Context, subID string) ([]Attempt, error)

	// Claim takes or renews the expiring lease key for owner and reports
	// whether owner holds it afterwards.
	Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// Release gives up the lease key if owner holds it.
	Release(ctx context.Context, key, owner string) error
	// Heartbeat records owner as a live member of the hubs sharing the
	// store until ttl from now (ttl <= 0: owner leaves at once) and returns
	// the owners live now, sorted. Expiry runs on the store's clock.
	Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error)

	// Ping reports whether the store is reachable.
	Ping(ctx context.Context) error

	// PutFollowStatus stores the follower status of the channel of topic, a
	// JSON value of at most MaxFollowStatusLen bytes (others are refused),
	// in place of the previous one. DeleteChannel removes it.
	PutFollowStatus(ctx context.Context, topic string, status []byte) error
	// FollowStatus returns the follower status of topic, or ErrNotFound.
	FollowStatus(ctx context.Context, topic string) ([]byte, error)
	// FollowStatuses returns every stored follower status, by topic.
	FollowStatuses(ctx context.Context) (map[string][]byte, error)
	// DeleteFollowStatus removes the follower status of topic, if any.
	DeleteFollowStatus(ctx context.Context, topic string) error
}

// ChannelsVersioner tells with one cheap read whether any channel
// definition changed: the version ChannelsVersion answers moves with every
// channel put and delete (and with TouchChannels); "" means it cannot tell.
type ChannelsVersioner interface {
	ChannelsVersion(ctx context.Context) (string, error)
}

// ChannelsToucher moves the channels version without changing a channel,
// telling the hubs that share the store to look again at what they keep
// under it (a continuity reset).
type ChannelsToucher interface {
	TouchChannels(ctx context.Context) error
}

// ChannelListing answers a channel definition from the channel listing the
// store holds under channels version ver (the last one read, kept for as
// long as the version stays), without I/O; ok is false when it holds no
// listing of ver or topic is not in it (a channel put since).
type ChannelListing interface {
	ListedChannel(ver, topic string) (ch Channel, ok bool)
}

// CursorBatcher stores many delivery cursors in one round, sending them
// without waiting for each one's answer. PutCursors returns the error of
// each cursor not stored, nil when all were; a cursor is stored only once
// the store acknowledged it.
type CursorBatcher interface {
	PutCursors(ctx context.Context, cursors map[string]Cursor) map[string]error
}

// DeliveryStateReader reads the cursors and whether dead letters may be
// stored of many subscriptions at once (an id absent from cursors has
// none stored).
type DeliveryStateReader interface {
	DeliveryStates(ctx context.Context, ids []string) (cursors map[string]Cursor, mayHaveDead map[string]bool, err error)
}

// MaxFollowStatusLen bounds a follower status the store keeps
// (Store.PutFollowStatus).
const MaxFollowStatusLen = 64 << 10

// CheckFollowStatus refuses a follower status a store does not keep: not
// JSON, or longer than MaxFollowStatusLen.
func CheckFollowStatus(status []byte) error {
	if len(status) > MaxFollowStatusLen {
		return fmt.Errorf("follow status is %d bytes; the limit is %d", len(status), MaxFollowStatusLen)
	}
	if !json.Valid(status) {
		return errors.New("follow status is not JSON")
	}
	return nil
}
