package hub

import (
	"context"
	"errors"
	"fmt"

	"github.com/rshub/rshub/wire"
)

// FrameworkNotification is a framework notification the hub composes
// about its own capability documents (package pull builds them from the
// log) for PublishFramework.
type FrameworkNotification struct {
	// Topic is the framework channel's topic (FrameworkTopic).
	Topic string
	// Body is the notification, capability framework-notification.
	Body []byte
	// ResourceSync is the Capability List the notification names.
	ResourceSync string
	// Entries counts the notification's entries.
	Entries int
	// Salt is what the body does not say of the change (which
	// incarnations of removed channels it announces); it is part of Key.
	Salt string
	// After is how far the caller read the log, finding no record with
	// Key: PublishFramework looks for one after it.
	After uint64
}

// Key is the notification's idempotency key (wire.Record.Key): a function
// of its topic, body and salt only, the same on every hub process and
// after a restart. Without a salt it is the key intake gives any publish
// of the same bytes on the topic.
func (n *FrameworkNotification) Key() string {
	return idempotencyKey(n.Topic, append(append([]byte(nil), n.Body...), n.Salt...))
}

// PublishFramework stores n on its framework channel through intake, once:
// under the channel's lock, with the channel's state caught up with the
// log, nothing is stored when the channel's last record or any of its
// records after n.After has n's key (the result is then Duplicate), and
// the append is conditional on the channel's last record, so a hub process
// that appended meanwhile makes this one catch up and look again. The rule
// holds across hub processes and restarts whatever the log's
// deduplication window. It answers a *PublishError with status 404 when
// n.Topic is no framework channel's (its channel was deleted).
func (h *Hub) PublishFramework(ctx context.Context, n FrameworkNotification) (PublishResult, error) {
	ch, err := h.frameworkChannelForTopic(ctx, n.Topic)
	if errors.Is(err, ErrNotFound) {
		return PublishResult{}, refuse(ReasonUnknownChannel, "%s is no framework channel's topic", wire.Clip(n.Topic))
	}
	if err != nil {
		return PublishResult{}, unavailable("the state store", fmt.Errorf("framework channel: %w", err))
	}
	return h.commit(ctx, incoming{
		ch:           ch,
		body:         n.Body,
		contentType:  "application/xml",
		resourcesync: n.ResourceSync,
		entries:      n.Entries,
		key:          n.Key(),
		once:         true,
		after:        n.After,
	})
}

// keyAfter returns the sequence of the first record of channel after seq
// after, up to seq last, whose key is key; 0 when there is none.
func (h *Hub) keyAfter(ctx context.Context, channel, key string, after, last uint64) (uint64, error) {
	found := uint64(0)
	err := Walk(ctx, h.cfg.Log, channel, after+1, last, func(rec wire.Record) error {
		if rec.Key == key {
			found = rec.Seq
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return 0, fmt.Errorf("framework notification already stored: %w", err)
	}
	return found, nil
}

// errFound ends a walk that found what it looked for.
var errFound = errors.New("found")
