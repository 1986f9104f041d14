package changefeed

import "fmt"

// checkLoc reports, in Strict mode, a <loc> that LocProblem refuses.
func (v *validator) checkLoc(loc string, idx, line int) error {
	if !v.strict {
		return nil
	}
	if p := LocProblem(loc); p != "" {
		return verr(RuleAbsoluteURI, idx, line, fmt.Sprintf("<loc> %q %s", clipS(loc), p))
	}
	return nil
}

// LocProblem says why loc breaks rule absolute-uri (an absolute http or
// https URI with a host, by RFC 3986's syntax with the non-ASCII
// characters of IRIs), or returns "" when it does not.
func LocProblem(loc string) string {
	scheme, rest, ok := splitScheme(loc)
	if !ok || !isHTTPScheme(scheme) || !hasAuthority(rest) {
		return "is not an absolute http or https URI"
	}
	host, p := uriProblem(loc)
	if p != "" {
		return "is not a URI: " + p
	}
	if host == "" {
		return "is not an absolute http or https URI: it has no host"
	}
	return ""
}

// checkHref reports, in Strict mode, an rs:ln href that is not an absolute
// URI (with a host when its scheme is http or https).
func (v *validator) checkHref(l *Link, idx, line int) error {
	if !v.strict {
		return nil
	}
	scheme, rest, ok := splitScheme(l.Href)
	if !ok || isHTTPScheme(scheme) && !hasAuthority(rest) {
		return verr(RuleAbsoluteURI, idx, line, fmt.Sprintf("rs:ln rel=%q href %q is not an absolute URI", clipS(l.Rel), clipS(l.Href)))
	}
	if host, p := uriProblem(l.Href); p != "" || host == "" && isHTTPScheme(scheme) {
		if p == "" {
			p = "it has no host"
		}
		return verr(RuleAbsoluteURI, idx, line, fmt.Sprintf("rs:ln rel=%q href %q is not a URI: %s", clipS(l.Rel), clipS(l.Href), p))
	}
	return nil
}

// splitScheme splits an absolute URI at its scheme (RFC 3986 §3.1:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":").
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func isHTTPScheme(scheme string) bool {
	return equalFoldASCII(scheme, "http") || equalFoldASCII(scheme, "https")
}

// hasAuthority reports whether the part after the scheme starts with "//"
// and a non-empty host.
func hasAuthority(rest string) bool {
	if len(rest) < 3 || rest[0] != '/' || rest[1] != '/' {
		return false
	}
	switch rest[2] {
	case '/', '?', '#', ':', '@':
		return false
	}
	return true
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c, d := a[i], b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
