package hub

import (
	"strings"
)

// WebLink is one link of an HTTP Link header (RFC 8288).
type WebLink struct {
	Href string
	Rels []string
}

// ParseLinkHeaders parses every Link header value into links, in order.
// Malformed links are skipped; a link with several space-separated relation
// types carries them all.
func ParseLinkHeaders(values []string) []WebLink {
	var out []WebLink
	for _, v := range values {
		for len(v) > 0 {
			v = strings.TrimLeft(v, " \t,")
			if !strings.HasPrefix(v, "<") {
				// skip to the next comma outside quotes
				v = skipPast(v, ',')
				continue
			}
			end := strings.IndexByte(v, '>')
			if end < 0 {
				break
			}
			l := WebLink{Href: strings.TrimSpace(v[1:end])}
			v = v[end+1:]
			// parameters until a top-level comma
			for {
				v = strings.TrimLeft(v, " \t")
				if !strings.HasPrefix(v, ";") {
					break
				}
				v = strings.TrimLeft(v[1:], " \t")
				name, val, rest := parseParam(v)
				v = rest
				if strings.EqualFold(name, "rel") {
					for _, r := range strings.Fields(val) {
						l.Rels = append(l.Rels, strings.ToLower(r))
					}
				}
			}
			out = append(out, l)
			v = strings.TrimLeft(v, " \t")
			if strings.HasPrefix(v, ",") {
				v = v[1:]
			} else if len(v) > 0 {
				v = skipPast(v, ',')
			}
		}
	}
	return out
}

// parseParam reads name[=value] where value is a token or a quoted string.
func parseParam(v string) (name, val, rest string) {
	i := 0
	for i < len(v) && v[i] != '=' && v[i] != ';' && v[i] != ',' {
		i++
	}
	name = strings.TrimSpace(v[:i])
	if i >= len(v) || v[i] != '=' {
		return name, "", v[i:]
	}
	v = strings.TrimLeft(v[i+1:], " \t")
	if strings.HasPrefix(v, `"`) {
		var b strings.Builder
		j := 1
		for j < len(v) && v[j] != '"' {
			if v[j] == '\\' && j+1 < len(v) {
				j++
			}
			b.WriteByte(v[j])
			j++
		}
		if j < len(v) {
			j++
		}
		return name, b.String(), v[j:]
	}
	j := 0
	for j < len(v) && v[j] != ';' && v[j] != ',' {
		j++
	}
	return name, strings.TrimSpace(v[:j]), v[j:]
}

// skipPast returns v after the first c outside a quoted string.
func skipPast(v string, c byte) string {
	inQuote := false
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '"':
			inQuote = !inQuote
		case v[i] == c && !inQuote:
			return v[i+1:]
		}
	}
	return ""
}

// LinkRel returns the hrefs of the links with relation rel.
func LinkRel(links []WebLink, rel string) []string {
	var out []string
	for _, l := range links {
		for _, r := range l.Rels {
			if r == rel {
				out = append(out, l.Href)
				break
			}
		}
	}
	return out
}

// FormatLinks renders the Link header value the hub sends with a
// distribution: self and hub, plus resourcesync when known.
func FormatLinks(topic, hubURL, resourcesync string) string {
	var b strings.Builder
	b.WriteString("<" + topic + `>; rel="self", <` + hubURL + `>; rel="hub"`)
	if resourcesync != "" {
		b.WriteString(", <" + resourcesync + `>; rel="resourcesync"`)
	}
	return b.String()
}
