package admin

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Lists are paged: a list answer holds at most limit items and, when more
// may follow, a Link header with rel="next" whose URL carries the opaque
// cursor of the next page (the same filters, a cursor parameter). A page
// may hold fewer items than limit, even none, and still have a next page:
// a filtered walk reads a bounded number of subscriptions per request.

const (
	// DefaultLimit is the page size of a list request without limit.
	DefaultLimit = 1000
	// MaxLimit is the largest page size a list request may ask for.
	MaxLimit = 1000
	// maxCursorLen bounds the cursor parameter: a channel cursor holds a
	// topic of up to hub.MaxTopicLen bytes, base64-encoded.
	maxCursorLen = (hub.MaxTopicLen+64)*4/3 + 4
)

// cursorKind says which walk a cursor continues; a cursor of one walk is
// refused by another.
type cursorKind byte

const (
	kindShards     cursorKind = 's' // every subscription, shard by shard
	kindTopic      cursorKind = 't' // the subscriptions of one topic, by ID
	kindFailing    cursorKind = 'f' // the failing subscriptions, by ID
	kindChannel    cursorKind = 'c' // channels, by topic
	kindDeliveries cursorKind = 'd' // the delivery engine's queues, by subscription ID
	kindAttempts   cursorKind = 'a' // a subscription's attempt log, newest first (attempts.go)
)

// cursor is where a page starts: in a shard walk, the shard and the last
// ID listed of it (empty: the shard's start); in the other walks, the last
// key listed (a subscription ID or a channel topic).
type cursor struct {
	kind  cursorKind
	shard int
	after string
}

// String encodes c as the opaque cursor parameter: base64url of
// "<kind><shard>:<after>".
func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(string(c.kind) + strconv.Itoa(c.shard) + ":" + c.after))
}

// parseCursor decodes the cursor parameter s of a walk of kind want; the
// zero cursor of want when s is empty. It refuses what String does not
// make, with a reason.
func parseCursor(s string, want cursorKind) (cursor, error) {
	if s == "" {
		return cursor{kind: want}, nil
	}
	if len(s) > maxCursorLen {
		return cursor{}, badRequest("cursor is %d bytes; cursors are at most %d", len(s), maxCursorLen)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 3 {
		return cursor{}, badRequest("cursor %q is not one this API made: pass the next link of a page as it is", wire.Clip(s))
	}
	c := cursor{kind: cursorKind(b[0])}
	if c.kind != want {
		return cursor{}, badRequest("cursor %q belongs to another list or filter", wire.Clip(s))
	}
	num, after, found := strings.Cut(string(b[1:]), ":")
	if !found || num == "" || len(num) > 2 || (len(num) > 1 && num[0] == '0') {
		return cursor{}, badRequest("cursor %q is not one this API made", wire.Clip(s))
	}
	if c.shard, err = strconv.Atoi(num); err != nil || c.shard < 0 {
		return cursor{}, badRequest("cursor %q is not one this API made", wire.Clip(s))
	}
	c.after = after
	switch c.kind {
	case kindShards:
		if !hub.ValidShard(c.shard) || (after != "" && (!validSubscriptionID(after) || hub.ShardOf(after) != c.shard)) {
			return cursor{}, badRequest("cursor %q names no place among the subscriptions", wire.Clip(s))
		}
	case kindTopic, kindFailing, kindDeliveries:
		if c.shard != 0 || !validSubscriptionID(after) {
			return cursor{}, badRequest("cursor %q names no subscription", wire.Clip(s))
		}
	case kindChannel:
		if c.shard != 0 || after == "" || len(after) > hub.MaxTopicLen {
			return cursor{}, badRequest("cursor %q names no channel", wire.Clip(s))
		}
	case kindAttempts:
		if _, ok := parseAttemptKey(after); c.shard != 0 || !ok {
			return cursor{}, badRequest("cursor %q names no attempt", wire.Clip(s))
		}
	}
	return c, nil
}

// parseLimit reads the limit parameter: DefaultLimit when absent, 1 to
// MaxLimit otherwise.
func parseLimit(s string) (int, error) {
	if s == "" {
		return DefaultLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxLimit {
		return 0, badRequest("limit %q: a page holds 1 to %d items", wire.Clip(s), MaxLimit)
	}
	return n, nil
}

// page is a list answer: its items and, when more may follow, the cursor
// of the next page.
type page[T any] struct {
	items []T
	next  *cursor
}

// paged is a handler's answer that handle writes as a JSON list with a
// Link header to the next page.
type paged interface {
	list() any
	nextLink(r *http.Request) string
}

func (p page[T]) list() any { return nonNil(p.items) }

// nextLink returns the Link header value of the next page of r's list, or
// "" when there is none: r's URL with its cursor parameter replaced.
func (p page[T]) nextLink(r *http.Request) string {
	if p.next == nil {
		return ""
	}
	q := r.URL.Query()
	q.Set("cursor", p.next.String())
	u := *r.URL
	u.RawQuery = q.Encode()
	u.Scheme, u.Host = "", ""
	return "<" + u.RequestURI() + `>; rel="next"`
}
