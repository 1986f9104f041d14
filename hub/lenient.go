package hub

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// Leniency is one rule a document fetched from a followed Source broke and
// the hub worked around, in lenient validation mode.
type Leniency struct {
	Rule string `json:"rule"` // a changefeed rule name
	Msg  string `json:"msg"`  // what was broken and what the hub did
}

// repairedFrom stands in for a Change List's missing root from while it is
// parsed; ParseFollowed replaces it.
const repairedFrom = "1970-01-01T00:00:00Z"

// ParseFollowed reads a document fetched from base, a followed Source's
// URL. In strict mode (lenient false) it is changefeed.Parse in Strict
// mode. In lenient mode a document that Strict refuses is read again with
// changefeed's Lenient mode and these repairs, each reported as a Leniency:
// the rule Strict named; a Change List without its root from (rule
// root-attributes) gets the time of its first entry; characters a URI may
// not hold in a <loc> ("<", a space, "]" in a path) are percent-encoded
// (changefeed.EscapeURI) and relative <loc>s are resolved against base
// (rule absolute-uri), and an entry whose <loc> is still not an absolute
// http(s) URI (a port that is not a number) is dropped, counted under the
// same rule: every published <loc> is a URI, as an atom:id must be an IRI
// (RFC 4287); entries without a change time
// are counted (rule change-time: the hub cannot place them, they are not
// published); entries out of order are counted (rule order: they are
// published sorted). Anything Lenient refuses stays refused.
func ParseFollowed(body []byte, base string, lenient bool, maxBody int64) (*changefeed.Document, []Leniency, error) {
	strict := changefeed.Options{Mode: changefeed.Strict, MaxBytes: maxBody}
	doc, err := changefeed.Parse(bytes.NewReader(body), strict)
	if err == nil || !lenient {
		return doc, nil, err
	}
	var ve *changefeed.ValidationError
	if !errors.As(err, &ve) {
		return nil, nil, err
	}
	var out []Leniency
	add := func(rule changefeed.Rule, format string, args ...any) {
		out = append(out, Leniency{Rule: string(rule), Msg: wire.Clip(fmt.Sprintf(format, args...))})
	}
	opt := changefeed.Options{Mode: changefeed.Lenient, MaxBytes: maxBody}
	doc, lerr := changefeed.Parse(bytes.NewReader(body), opt)
	missingFrom := false
	if errors.Is(lerr, changefeed.RuleRootAttributes) {
		if fixed, ok := addRootFrom(body); ok {
			missingFrom = true
			doc, lerr = changefeed.Parse(bytes.NewReader(fixed), opt)
		}
	}
	if lerr != nil {
		return nil, nil, lerr
	}
	if !errors.Is(err, changefeed.RuleRootAttributes) {
		add(ve.Rule, "%s", ve.Error())
	}
	if missingFrom {
		doc.MD.From = changefeed.DateTime{}
		for _, e := range doc.Entries {
			if t := changefeed.EntryTime(e); !t.IsZero() && (doc.MD.From.IsZero() || t.Before(doc.MD.From.Time)) {
				doc.MD.From = dateTime(t)
			}
		}
		add(changefeed.RuleRootAttributes, "a Change List without its root rs:md from: taken as its first entry's time %s", fmtFollowTime(doc.MD.From.Time))
	}
	repairEntries(doc, base, add)
	return doc, out, nil
}

// repairEntries percent-encodes the characters no URI may hold in locs,
// resolves relative locs against base, drops the entries whose loc is
// still not an absolute http(s) URI, and counts entries without a change
// time and entries out of order.
func repairEntries(doc *changefeed.Document, base string, add func(changefeed.Rule, string, ...any)) {
	b, _ := url.Parse(base)
	escaped, relative, dropped, timeless, disorder := 0, 0, 0, 0, 0
	var last time.Time
	kept := doc.Entries[:0]
	for _, e := range doc.Entries {
		if loc := changefeed.EscapeURI(e.Loc); loc != e.Loc {
			e.Loc = loc
			escaped++
		}
		if u, err := url.Parse(e.Loc); err == nil && b != nil && (u.Scheme == "" || u.Host == "") {
			e.Loc = b.ResolveReference(u).String()
			relative++
		}
		if changefeed.LocProblem(e.Loc) != "" {
			dropped++
			continue
		}
		kept = append(kept, e)
		if doc.MD.Capability != changefeed.CapChangeList && doc.MD.Capability != changefeed.CapChangeNotification {
			continue
		}
		t := changefeed.EntryTime(e)
		if t.IsZero() {
			timeless++
			continue
		}
		if t.Before(last) {
			disorder++
		}
		last = t
	}
	doc.Entries = kept
	if escaped > 0 {
		add(changefeed.RuleAbsoluteURI, "%d <loc>s with characters a URI may not hold: percent-encoded", escaped)
	}
	if relative > 0 {
		add(changefeed.RuleAbsoluteURI, "%d relative <loc>s resolved against %s", relative, base)
	}
	if dropped > 0 {
		add(changefeed.RuleAbsoluteURI, "%d entries whose <loc> is not an absolute http(s) URI even so: not published", dropped)
	}
	if timeless > 0 {
		add(changefeed.RuleChangeTime, "%d entries without datetime or lastmod: not published", timeless)
	}
	if disorder > 0 {
		add(changefeed.RuleOrder, "%d entries out of chronological order: published sorted", disorder)
	}
}

// addRootFrom inserts from="1970-01-01T00:00:00Z" into the root rs:md of a
// Change List that has none, and reports whether it did.
func addRootFrom(body []byte) ([]byte, bool) {
	d := xml.NewDecoder(bytes.NewReader(body))
	depth := 0
	for {
		off := d.InputOffset()
		tok, err := d.RawToken()
		if err != nil {
			return nil, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 2 && t.Name.Local == "md" {
				capa, hasFrom := "", false
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "capability":
						capa = a.Value
					case "from":
						hasFrom = a.Name.Space == ""
					}
				}
				if capa != string(changefeed.CapChangeList) || hasFrom {
					return nil, false
				}
				name := t.Name.Local
				if t.Name.Space != "" {
					name = t.Name.Space + ":" + name
				}
				at := int(off) + 1 + len(name)
				if at > len(body) || string(body[int(off)+1:at]) != name {
					return nil, false
				}
				return slices.Concat(body[:at], []byte(` from="`+repairedFrom+`"`), body[at:]), true
			}
		case xml.EndElement:
			depth--
		}
	}
}

func fmtFollowTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
