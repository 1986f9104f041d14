package wire

import "strings"

// Framework Notification channels (ResourceSync Framework Notification
// 1.0.1). Every channel the hub knows has a companion channel, hosted by
// the hub, on which the hub announces changes to the channel's capability
// documents (a Change List closed and a new one opened, a list added to the
// archive, the Capability List or the Source Description changed) and on
// which the Source may publish its own framework notifications. It is a
// channel like any other: its records are in the log under its own name,
// it is a NATS subject, a WebSocket channel and a WebSub topic with its own
// cursor; only the payload differs (rs:md capability="framework-notification").
const (
	// FrameworkSuffix ends the name of a framework channel:
	// "<name>-framework" for the channel "<name>".
	FrameworkSuffix = "-framework"
	// CapFrameworkNotification is the capability of a framework channel's
	// Capability List entry and of its payloads.
	CapFrameworkNotification = "framework-notification"
	// maxChannelName is the longest channel name.
	maxChannelName = 64
)

// FrameworkChannel returns the name of the framework channel of the
// channel name, and false when name is empty, is itself a framework
// channel's name, or is too long to take the suffix (a channel name is at
// most 64 characters).
func FrameworkChannel(name string) (string, bool) {
	if name == "" || strings.HasSuffix(name, FrameworkSuffix) || len(name)+len(FrameworkSuffix) > maxChannelName {
		return "", false
	}
	return name + FrameworkSuffix, true
}

// FrameworkParent returns the name of the channel whose framework channel
// is name, and false when name does not end with FrameworkSuffix.
func FrameworkParent(name string) (string, bool) {
	p, ok := strings.CutSuffix(name, FrameworkSuffix)
	if !ok || p == "" {
		return "", false
	}
	return p, true
}

// FrameworkTopicPath returns the path of the hosted topic URI of the
// framework channel of channel name (TopicPath of FrameworkChannel), or ""
// when it has none.
func FrameworkTopicPath(name string) string {
	fw, ok := FrameworkChannel(name)
	if !ok {
		return ""
	}
	return TopicPath(fw)
}
