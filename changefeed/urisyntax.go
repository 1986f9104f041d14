package changefeed

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// URI syntax (RFC 3986 §3, with the non-ASCII characters RFC 3987 §2.2
// allows in IRIs): a <loc> becomes an atom:id and an rs:ln href a link
// that other software parses, so Strict refuses what is not one.

// uriPart is the part of a URI reference a character stands in.
type uriPart uint8

const (
	partUser uriPart = iota
	partHost
	partPath
	partQuery
	partFragment
)

// scanURI calls bad for each character of s (offset and byte length) that
// no URI reference may hold where it stands, and returns its host (""
// when it has none) and what else is wrong with its authority (""
// when nothing): a port that is not a number or an IP literal that is not
// one, which no escaping mends.
func scanURI(s string, bad func(i, n int)) (host, problem string) {
	i := 0
	if _, rest, ok := splitScheme(s); ok {
		i = len(s) - len(rest)
	}
	if strings.HasPrefix(s[i:], "//") {
		i += 2
		end := len(s)
		if j := strings.IndexAny(s[i:], "/?#"); j >= 0 {
			end = i + j
		}
		h := i
		if at := strings.IndexByte(s[i:end], '@'); at >= 0 {
			scanChars(s, i, i+at, partUser, bad)
			h = i + at + 1
		}
		hostEnd := end
		if strings.HasPrefix(s[h:end], "[") {
			j := strings.IndexByte(s[h:end], ']')
			if j < 0 || !ipLiteral(s[h+1:h+j]) || h+j+1 < end && s[h+j+1] != ':' {
				return "", "its host is not an IP literal (RFC 3986 §3.2.2)"
			}
			hostEnd = h + j + 1
		} else {
			if j := strings.IndexByte(s[h:end], ':'); j >= 0 {
				hostEnd = h + j
			}
			if scanChars(s, h, hostEnd, partHost, bad) {
				problem = "its host percent-encodes an ASCII character"
			}
		}
		host = s[h:hostEnd]
		if hostEnd < end && problem == "" && strings.Trim(s[hostEnd+1:end], "0123456789") != "" {
			problem = "its port is not a number"
		}
		i = end
	}
	part := partPath
	for j := i; j <= len(s); j++ {
		if j < len(s) && !(s[j] == '?' && part == partPath || s[j] == '#' && part != partFragment) {
			continue
		}
		scanChars(s, i, j, part, bad)
		if j < len(s) {
			if s[j] == '?' {
				part = partQuery
			} else {
				part = partFragment
			}
		}
		i = j + 1
	}
	return host, problem
}

// scanChars calls bad for each character of s[from:to] that part may not
// hold, and reports whether it percent-encodes an ASCII character, which
// RFC 3986 allows in a host but net/url and other clients refuse.
func scanChars(s string, from, to int, part uriPart, bad func(i, n int)) (asciiEscape bool) {
	for i := from; i < to; {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:to])
			if !(isUCSChar(r) || part == partQuery && isIPrivate(r)) {
				bad(i, n)
			}
			i += n
			continue
		}
		switch {
		case c == '%':
			if i+2 < to && isHex(s[i+1]) && isHex(s[i+2]) {
				asciiEscape = asciiEscape || s[i+1] < '8'
				i += 3
				continue
			}
			bad(i, 1)
		case isUnreserved(c) || strings.IndexByte("!$&'()*+,;=", c) >= 0:
		case c == ':' && part != partHost:
		case c == '@' && part >= partPath:
		case c == '/' && part >= partPath:
		case c == '?' && part >= partQuery:
		default:
			bad(i, 1)
		}
		i++
	}
	return asciiEscape
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isUCSChar reports whether r is a ucschar of RFC 3987.
func isUCSChar(r rune) bool {
	switch {
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFEF:
		return true
	case r >= 0x10000 && r <= 0xEFFFD:
		return r&0xFFFF <= 0xFFFD
	}
	return false
}

// isIPrivate reports whether r is an iprivate of RFC 3987 (query only).
func isIPrivate(r rune) bool {
	return r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000 && r <= 0x10FFFD && r&0xFFFF <= 0xFFFD
}

// ipLiteral reports whether s (between the brackets) is an IPv6 address
// without zone (RFC 3986 §3.2.2; IPvFuture, which no HTTP client reaches
// and net/url refuses, is refused too).
func ipLiteral(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}

// uriProblem says why s is not a URI reference (RFC 3986, with IRI
// characters), or returns "", and returns its host.
func uriProblem(s string) (host, problem string) {
	first := -1
	host, problem = scanURI(s, func(i, _ int) {
		if first < 0 {
			first = i
		}
	})
	if first >= 0 {
		r, _ := utf8.DecodeRuneInString(s[first:])
		return host, fmt.Sprintf("it holds %q at byte %d, which a URI may not hold there (RFC 3986)", r, first)
	}
	return host, problem
}

// EscapeURI percent-encodes (as UTF-8) every character of s that no URI
// may hold where it stands (RFC 3986 §2.1; non-ASCII characters an IRI
// allows, RFC 3987, are kept): "<" anywhere, "]" outside an IP literal, a
// second "#", a "%" not followed by two hex digits. Anything else is
// left as it is, so a reference whose port is not a number or whose IP
// literal is not one is still not a URI.
func EscapeURI(s string) string {
	var b strings.Builder
	last := 0
	scanURI(s, func(i, n int) {
		b.WriteString(s[last:i])
		for k := i; k < i+n; k++ {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[s[k]>>4])
			b.WriteByte("0123456789ABCDEF"[s[k]&15])
		}
		last = i + n
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
