package wire

import "strings"

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
