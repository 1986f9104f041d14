package hub

import (
	"context"
	"errors"
	"fmt"
)

// ErrChannelExists is CreateChannel's refusal of a channel whose name or
// topic another channel already has: creating never replaces (PutChannel
// does). The error is an *ExistsError naming that channel.
var ErrChannelExists = errors.New("exists")

// ExistsError is CreateChannel's refusal: Channel is the channel that has
// the name or topic already.
type ExistsError struct {
	Channel Channel
	ByName  bool // the name is taken (else the topic)
}

func (e *ExistsError) Error() string {
	if e.ByName {
		return fmt.Sprintf("channel: channel %q exists (topic %s)", e.Channel.Name, e.Channel.Topic)
	}
	return fmt.Sprintf("channel: topic %s exists, as channel %q", e.Channel.Topic, e.Channel.Name)
}

// Unwrap makes errors.Is(err, ErrChannelExists) hold.
func (e *ExistsError) Unwrap() error { return ErrChannelExists }

// errPrivateUnreadable refuses a private channel on a hub that verifies no
// subscriber token: no one could ever read it.
var errPrivateUnreadable = errors.New("a private channel is read only with a subscriber token, and this hub verifies none: " +
	"start it with --subscriber-jwt-key (an HMAC secret of 32 bytes or more, or a PEM public key) or --subscriber-jwks-url")

// checkPrivate refuses a private channel no one could read.
func (h *Hub) checkPrivate(ch Channel) error {
	if ch.Private && h.cfg.Subscribers == nil {
		return errPrivateUnreadable
	}
	return nil
}

// CreateChannel is PutChannel for a channel that must be new: a channel
// with the same name or topic is refused with ErrChannelExists, naming
// it, and left as it is. Two creates of one channel racing through two
// hubs may both succeed (the later definition wins), as two PutChannel
// calls would.
func (h *Hub) CreateChannel(ctx context.Context, ch Channel) (Channel, error) {
	c, err := h.checkChannel(ch)
	if err != nil {
		return c, fmt.Errorf("channel: %w: %w", ErrChannelRefused, err)
	}
	switch old, err := h.ChannelByName(ctx, c.Name); {
	case err == nil:
		return c, &ExistsError{Channel: old, ByName: true}
	case !errors.Is(err, ErrNotFound):
		return c, fmt.Errorf("channel: %w", err)
	}
	switch old, err := h.cfg.Store.Channel(ctx, c.Topic); {
	case err == nil:
		return c, &ExistsError{Channel: old}
	case !errors.Is(err, ErrNotFound):
		return c, fmt.Errorf("channel: %w", err)
	}
	return h.PutChannel(ctx, ch)
}
