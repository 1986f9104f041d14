package hub

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
)

// checkLen refuses a value longer than limit bytes, naming the parameter
// and the limit.
func checkLen(name, value string, limit int) error {
	if len(value) > limit {
		return fmt.Errorf("%s is %d bytes; the limit is %d bytes", name, len(value), limit)
	}
	return nil
}

// Truncate shortens an attacker-controlled string for a log line: at most
// 256 bytes (cut on a rune boundary), followed by "…" and the original
// length when it was cut.
func Truncate(s string) string {
	const keep = 256
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	var b strings.Builder
	b.WriteString(s[:cut])
	fmt.Fprintf(&b, "…(%d bytes)", len(s))
	return b.String()
}
