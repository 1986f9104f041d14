package wire

import (
	"net/url"
	"strings"
)

// The NATS scheme of the log: every stored record is one message of the
// JetStream stream Stream on the subject <SubjectPrefix>.<channel>.
const (
	// Stream is the default name of the log's JetStream stream.
	Stream = "RSHUB"
	// SubjectPrefix is the default prefix of the log's subjects.
	SubjectPrefix = "rshub.notify"
)

// Subject returns the subject of channel's records under prefix
// (SubjectPrefix when empty). Channel "" names every channel: the
// wildcard subject "<prefix>.>" the stream captures.
func Subject(prefix, channel string) string {
	if prefix == "" {
		prefix = SubjectPrefix
	}
	if channel == "" {
		return prefix + ".>"
	}
	return prefix + "." + channel
}

// SubjectChannel returns the channel a record's subject names: its last
// token (channel names hold no ".").
func SubjectChannel(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}

// RedactURLs returns urls, NATS server URLs separated by commas (a
// client's --nats-url, nats://user:password@host:4222), with every
// password replaced by "xxxxx" (and a user without a password, which
// NATS takes as a token), for error messages and logs.
func RedactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			if _, ok := u.User.Password(); !ok {
				u.User = url.User("xxxxx")
			}
			parts[i] = u.Redacted()
		} else if err != nil && strings.Contains(p, "@") {
			parts[i] = "(a URL that does not parse)"
		}
	}
	return strings.Join(parts, ",")
}
