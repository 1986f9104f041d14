package wire

import "strings"

// Link relation types of the protocol.
const (
	RelSelf         = "self"         // the topic URI
	RelHub          = "hub"          // the hub URL
	RelResourceSync = "resourcesync" // the Source's Capability List
	RelUp           = "up"           // a document's parent (ResourceSync navigation)
	RelDescribedBy  = "describedby"  // a document describing the channel's dataset
)

// HeaderLink is the header of a publish and of a webhook delivery that
// names the topic, the hub and the Capability List.
const HeaderLink = "Link"

// NotificationLinks returns the Link header value of a publish or of a
// webhook delivery: <topic>; rel="self", <hub>; rel="hub", and
// <resourcesync>; rel="resourcesync" when that is not empty.
func NotificationLinks(topic, hub, resourcesync string) string {
	return FormatLinks(
		Link{Href: topic, Rels: []string{RelSelf}},
		Link{Href: hub, Rels: []string{RelHub}},
		Link{Href: resourcesync, Rels: []string{RelResourceSync}},
	)
}

// Link is one link of an HTTP Link header (RFC 8288, as far as WebSub and
// ResourceSync use it): a target and its relation types, in lower case.
type Link struct {
	Href string
	Rels []string
}

// Has reports whether the link carries relation type rel (case-insensitive).
func (l Link) Has(rel string) bool {
	for _, r := range l.Rels {
		if strings.EqualFold(r, rel) {
			return true
		}
	}
	return false
}

// ParseLinks reads every Link header value in order. Malformed links are
// skipped; a rel parameter with several space-separated types gives the
// link all of them.
func ParseLinks(values []string) []Link {
	var out []Link
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t\r\n,")
			if v == "" {
				break
			}
			if v[0] != '<' {
				v = skipLink(v)
				continue
			}
			end := strings.IndexByte(v, '>')
			if end < 0 {
				break
			}
			l := Link{Href: strings.TrimSpace(v[1:end])}
			v = v[end+1:]
			for {
				v = strings.TrimLeft(v, " \t\r\n")
				if v == "" || v[0] != ';' {
					break
				}
				var name, val string
				name, val, v = param(v[1:])
				if strings.EqualFold(name, "rel") {
					for _, r := range strings.Fields(val) {
						if validRel(r) {
							l.Rels = append(l.Rels, strings.ToLower(r))
						}
					}
				}
			}
			if l.Href != "" {
				out = append(out, l)
			}
			v = skipLink(v)
		}
	}
	return out
}

// LinksRel returns the targets of every link with relation type rel, in
// order.
func LinksRel(links []Link, rel string) []string {
	var out []string
	for _, l := range links {
		if l.Has(rel) {
			out = append(out, l.Href)
		}
	}
	return out
}

// FirstLink returns the first target with relation type rel, or "".
func FirstLink(links []Link, rel string) string {
	for _, l := range links {
		if l.Has(rel) {
			return l.Href
		}
	}
	return ""
}

// FormatLinks writes links as one Link header value:
// `<a>; rel="self", <b>; rel="hub"`. Links without a target are left out.
func FormatLinks(links ...Link) string {
	var b strings.Builder
	for _, l := range links {
		if l.Href == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("<" + l.Href + `>; rel="` + strings.Join(l.Rels, " ") + `"`)
	}
	return b.String()
}

// skipLink moves past the next comma outside a quoted string.
func skipLink(v string) string {
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ',':
			return v[i+1:]
		}
	}
	return ""
}

// param reads `name[=value]` where value is a token or a quoted string,
// and returns the rest of v after it.
func param(v string) (name, val, rest string) {
	v = strings.TrimLeft(v, " \t\r\n")
	i := 0
	for i < len(v) && v[i] != '=' && v[i] != ';' && v[i] != ',' {
		i++
	}
	name = strings.TrimSpace(v[:i])
	if i >= len(v) || v[i] != '=' {
		return name, "", v[i:]
	}
	v = strings.TrimLeft(v[i+1:], " \t\r\n")
	if v != "" && v[0] == '"' {
		var b strings.Builder
		j := 1
		for ; j < len(v) && v[j] != '"'; j++ {
			if v[j] == '\\' && j+1 < len(v) {
				j++
			}
			b.WriteByte(v[j])
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

// validRel reports whether r can be a relation type: visible ASCII without
// the characters that delimit Link header parts.
func validRel(r string) bool {
	for i := 0; i < len(r); i++ {
		if c := r[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>,;\\`, c) >= 0 {
			return false
		}
	}
	return r != ""
}
