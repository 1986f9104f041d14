package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

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

// mercureKeyPrefix starts the idempotency key of a Mercure update that
// its publisher gave an id (MercureKey).
const mercureKeyPrefix = "mercure-id:"

// MercureKey returns the idempotency key (Record.Key) of a Mercure update
// of topic whose publisher gave it id: unique per topic and id, and
// holding id for MercureID.
func MercureKey(topic, id string) string {
	sum := sha256.Sum256([]byte(topic))
	return mercureKeyPrefix + hex.EncodeToString(sum[:8]) + ":" + id
}

// MercureID returns the publisher's id a record's key holds (MercureKey),
// "" when it holds none.
func MercureID(key string) string {
	rest, ok := strings.CutPrefix(key, mercureKeyPrefix)
	if !ok {
		return ""
	}
	_, id, _ := strings.Cut(rest, ":")
	return id
}
