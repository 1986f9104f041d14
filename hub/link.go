package hub

import "github.com/rshub/rshub/wire"

// FormatLinks renders the Link header value the hub sends with a
// distribution: self and hub, plus resourcesync when known
// (wire.NotificationLinks).
func FormatLinks(topic, hubURL, resourcesync string) string {
	return wire.NotificationLinks(topic, hubURL, resourcesync)
}
