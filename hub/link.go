package hub

import (
	"github.com/rshub/rshub/internal/weblink"
)

// FormatLinks renders the Link header value the hub sends with a
// distribution: self and hub, plus resourcesync when known.
func FormatLinks(topic, hubURL, resourcesync string) string {
	return weblink.Format(
		weblink.Link{Href: topic, Rels: []string{"self"}},
		weblink.Link{Href: hubURL, Rels: []string{"hub"}},
		weblink.Link{Href: resourcesync, Rels: []string{"resourcesync"}},
	)
}
