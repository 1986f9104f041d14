package follow

import (
	"net/http"
	"strings"
)

// Validators are what a conditional GET sends back (If-None-Match,
// If-Modified-Since): the ETag and Last-Modified of the last response whose
// content the follower used, those it can trust. Empty fields are not sent.
type Validators struct {
	ETag, LastModified string
}

// TrustedValidators returns the validators of a response, given its
// header, that a conditional GET may send back without losing content: a
// conditional request may save bandwidth, never content. A document the
// follower reads must come back whole when it changed, so:
//
//   - Last-Modified is kept only when the response has a Date and
//     Last-Modified is in an earlier second. HTTP dates have one-second
//     resolution: a document written again in the second its response was
//     stamped (python3 -m http.server, nginx with etag off, a proxy or CDN
//     that drops ETags) keeps its Last-Modified, and a server answers 304
//     to the next If-Modified-Since. Last-Modified in Date's second or
//     later, or no Date (no way to tell), is not used.
//   - A weak ETag (W/"…") is never kept: it promises an equivalent
//     representation, the follower needs the exact bytes.
//   - A strong ETag is kept, unless it comes with a Last-Modified that is
//     not kept: nginx and Apache build their default ETag from the file's
//     mtime and size, so a same-size rewrite in the same second keeps the
//     ETag too. An ETag with no Last-Modified beside it (a Source that
//     derives it from the content) is kept whatever the Date.
//
// It is pure.
func TrustedValidators(h http.Header) Validators {
	var v Validators
	lm := h.Get("Last-Modified")
	lmTrusted := false
	if lm != "" {
		mod, err := http.ParseTime(lm)
		date, derr := http.ParseTime(h.Get("Date"))
		lmTrusted = err == nil && derr == nil && mod.Before(date)
		if lmTrusted {
			v.LastModified = lm
		}
	}
	if etag := h.Get("ETag"); strongETag(etag) && (lm == "" || lmTrusted) {
		v.ETag = etag
	}
	return v
}

// strongETag reports whether s is a strong entity tag: a quoted opaque
// string without the W/ prefix (RFC 9110 §8.8.3).
func strongETag(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	return !strings.ContainsAny(s[1:len(s)-1], "\"\x00\r\n")
}
