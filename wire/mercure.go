package wire

// The Mercure face of the hub: where it answers the Mercure protocol, and
// the link relation that advertises it (a Link header with rel="mercure"
// on hosted topics and pull-mode documents).
const (
	PathMercure = "/.well-known/mercure"
	RelMercure  = "mercure"
)

// MercureLink returns the Link header value that advertises the Mercure
// face of the hub at origin (scheme and host, no path).
func MercureLink(origin string) string {
	return FormatLinks(Link{Href: origin + PathMercure, Rels: []string{RelMercure}})
}
