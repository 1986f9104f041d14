package access

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxURLPatternLen bounds a URL pattern, in a subscription's
// match_urlpattern or a token's topic matcher.
const MaxURLPatternLen = 2048

// CompileURLPattern compiles the subset of the WHATWG URL Pattern syntax
// the hub implements (Mercure's urlpattern matcher type) into a regular
// expression anchored at both ends that matches whole topics:
//
//   - a leading scheme and its ":" ("https:") match themselves;
//   - ":" before a digit (a port) matches itself;
//   - ":name" (a letter or "_", then letters, digits or "_") matches one
//     or more characters other than "/", "?" and "#": one path segment;
//   - "*" matches any run of characters, including none and "/";
//   - every other character matches itself, byte for byte.
//
// The rest of the standard (groups "(…)", "{…}", the modifiers "?", "+"
// and "*" after a part, "\" escapes, relative patterns, case-insensitive
// hosts) is refused with an error naming it, so a pattern never means
// something other than what the standard says. The expression is RE2:
// matching is linear in the topic's length whatever the pattern.
func CompileURLPattern(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, fmt.Errorf("an empty URL pattern")
	}
	if len(p) > MaxURLPatternLen {
		return nil, fmt.Errorf("the URL pattern is %d bytes, more than %d", len(p), MaxURLPatternLen)
	}
	var b strings.Builder
	b.WriteString(`\A`)
	i := schemeLen(p)
	b.WriteString(regexp.QuoteMeta(p[:i]))
	for i < len(p) {
		c := p[i]
		switch {
		case c == ':' && i+1 < len(p) && '0' <= p[i+1] && p[i+1] <= '9': // a port
			b.WriteByte(':')
			i++
		case c == ':':
			j := i + 1
			for j < len(p) && isNameByte(p[j], j == i+1) {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("%q at byte %d is not followed by a parameter name", ":", i)
			}
			if err := noModifier(p, j); err != nil {
				return nil, err
			}
			b.WriteString(`[^/?#]+`)
			i = j
		case c == '*':
			if err := noModifier(p, i+1); err != nil {
				return nil, err
			}
			b.WriteString(`(?s:.*)`)
			i++
		case strings.IndexByte(`(){}\+`, c) >= 0:
			return nil, fmt.Errorf("%q at byte %d: groups, escapes and modifiers are not in the subset of URL Pattern this hub implements (literal text, :name segments, *)", string(c), i)
		default:
			j := i + 1
			for j < len(p) && strings.IndexByte(`:*(){}\+`, p[j]) < 0 {
				j++
			}
			b.WriteString(regexp.QuoteMeta(p[i:j]))
			i = j
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil { // not reached: every part is quoted or one of the forms above
		return nil, fmt.Errorf("URL pattern: %w", err)
	}
	return re, nil
}

// noModifier refuses a "?" right after a parameter or a wildcard, which
// the standard reads as "optional".
func noModifier(p string, i int) error {
	if i < len(p) && p[i] == '?' {
		return fmt.Errorf("%q at byte %d: the optional modifier is not in the subset of URL Pattern this hub implements", "?", i)
	}
	return nil
}

// schemeLen returns the length of p's leading scheme and its ":"
// (RFC 3986: a letter, then letters, digits, "+", "-", "."), 0 without one.
func schemeLen(p string) int {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		return true
	case '0' <= c && c <= '9':
		return !first
	}
	return false
}
