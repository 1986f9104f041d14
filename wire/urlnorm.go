package wire

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// NormalizeURL returns the one spelling of a topic or callback URL under
// which the hub keeps and compares it: RFC 3986 §6.2.2's syntax-based
// normalisation, as WebSub §5.1.1 asks of hubs ("Hubs MUST always decode
// non-reserved characters for these URL parameters").
//
//   - the scheme and the host are lower case (user info and path are not
//     touched: they are case-sensitive);
//   - a percent-encoded unreserved character (A-Z a-z 0-9 - . _ ~) is
//     decoded, every other percent-encoding has upper-case hex digits;
//   - the default port of http (80) and https (443), and an empty port,
//     are removed;
//   - an http(s) URL with a host and an empty path gets the path "/".
//
// Dot segments are left as they are (a Source may mean them), and so is
// everything the rules above do not name. NormalizeURL is pure, never
// panics, and is idempotent: NormalizeURL of its result is that result.
// It refuses a URL holding a byte that is not UTF-8, a control character,
// a "%" not followed by two hex digits, or a colon in its first segment
// without a scheme (a URL that is not one);
// whether the URL is an absolute http(s) URL is for the caller to check.
func NormalizeURL(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", errors.New("the URL holds bytes that are not UTF-8")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("the URL holds the control character %#02x", c)
		}
	}
	scheme, rest := splitScheme(raw)
	if i := strings.IndexAny(rest, ":/?#"); scheme == "" && i >= 0 && rest[i] == ':' {
		return "", errors.New("the URL has a colon in its first segment but no scheme")
	}
	var b strings.Builder
	b.Grow(len(raw))
	if scheme != "" {
		b.WriteString(strings.ToLower(scheme))
		b.WriteByte(':')
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		end := strings.IndexAny(after, "/?#")
		if end < 0 {
			end = len(after)
		}
		auth, host, err := normAuthority(after[:end], strings.ToLower(scheme))
		if err != nil {
			return "", err
		}
		b.WriteString("//")
		b.WriteString(auth)
		rest = after[end:]
		if s := strings.ToLower(scheme); (s == "http" || s == "https") && host != "" && (rest == "" || rest[0] != '/') {
			b.WriteByte('/')
		}
	}
	if err := normPercent(&b, rest); err != nil {
		return "", err
	}
	return b.String(), nil
}

// splitScheme splits raw at its scheme's colon (RFC 3986 §3.1: a letter,
// then letters, digits, "+", "-" or "."); scheme is "" when raw has none.
func splitScheme(raw string) (scheme, rest string) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return raw[:i], raw[i+1:]
		default:
			return "", raw
		}
	}
	return "", raw
}

// normAuthority normalises [userinfo@]host[:port]: its percent-encodings
// (normPercent, first, so that what they decode to is split as given), the
// host in lower case, the port without leading zeros, the scheme's default
// port and an empty port removed. It returns the authority and its host.
func normAuthority(auth, scheme string) (norm, host string, err error) {
	var d strings.Builder
	if err := normPercent(&d, auth); err != nil {
		return "", "", err
	}
	auth = d.String()
	var b strings.Builder
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		b.WriteString(auth[:i+1])
		auth = auth[i+1:]
	}
	host, port, hasPort := auth, "", false
	// a port follows the last colon of a host that holds no other one
	// outside an IP literal's brackets
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && digits(auth[i+1:]) {
		if h := auth[:i]; !strings.ContainsAny(h, ":[]") || strings.HasPrefix(h, "[") && strings.IndexByte(h, ']') == len(h)-1 {
			host, port, hasPort = h, trimZeros(auth[i+1:]), true
		}
	}
	for i := 0; i < len(host); i++ { // lower case, but for the hex of a percent-encoding
		switch c := host[i]; {
		case c == '%' && i+2 < len(host):
			b.WriteString(host[i : i+3])
			i += 2
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	switch {
	case !hasPort || port == "":
	case scheme == "http" && port == "80", scheme == "https" && port == "443":
	default:
		b.WriteByte(':')
		b.WriteString(port)
	}
	return b.String(), host, nil
}

// normPercent writes s with its percent-encodings normalised: unreserved
// characters decoded, the hex of the others in upper case.
func normPercent(b *strings.Builder, s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return fmt.Errorf("%q is not a percent-encoding (%% must be followed by two hex digits)", Clip(s[i:min(len(s), i+3)]))
		}
		if d := unhex(s[i+1])<<4 | unhex(s[i+2]); unreserved(d) {
			b.WriteByte(d)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex(s[i+1]))
			b.WriteByte(upperHex(s[i+2]))
		}
		i += 2
	}
	return nil
}

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func upperHex(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - ('a' - 'A')
	}
	return c
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// trimZeros drops a port's leading zeros ("080" is port 80).
func trimZeros(port string) string {
	t := strings.TrimLeft(port, "0")
	if t == "" && port != "" {
		return "0"
	}
	return t
}
