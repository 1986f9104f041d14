package hub

import (
	"fmt"
)

// Limits on what a client may send, enforced at the edge with a 4xx that
// names the limit. None of these strings ever becomes a protocol token:
// stores and the log derive fixed-length keys from them and keep the
// original as data.
const (
	// MaxTopicLen bounds a topic URI (hub.topic, hub.url, Link rel="self",
	// admin ?topic=), in bytes.
	MaxTopicLen = 8 << 10
	// MaxCallbackLen bounds a subscription's hub.callback, in bytes.
	MaxCallbackLen = 8 << 10
	// MaxIDLen bounds identifiers a client names (subscription and dead
	// letter IDs in the admin API), in bytes.
	MaxIDLen = 128
	// MaxChannelNameLen bounds channel names (ValidChannelName), in bytes.
	MaxChannelNameLen = maxChannelName
	// MaxHeaderBytes bounds the request line and headers of every request
	// the hub serves (Link headers carry up to three URIs).
	MaxHeaderBytes = 64 << 10
	// DefaultMaxOpenChannels bounds how many channels --open-topics may
	// create.
	DefaultMaxOpenChannels = 10000
	// DefaultMaxSubscriptions bounds the subscriptions a hub with
	// --open-topics holds.
	DefaultMaxSubscriptions = 100000
	// DefaultMaxSubscriptionsPerHost bounds the subscriptions of one
	// callback host on a hub with --open-topics.
	DefaultMaxSubscriptionsPerHost = 1000
)

// checkLen refuses a value longer than limit bytes, naming the parameter
// and the limit.
func checkLen(name, value string, limit int) error {
	if len(value) > limit {
		return fmt.Errorf("%s is %d bytes; the limit is %d bytes", name, len(value), limit)
	}
	return nil
}
