package changefeed

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

const (
	xmlDecl  = `<?xml version="1.0" encoding="UTF-8"?>`
	rootOpen = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
	notifMD  = `<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T00:10:00Z"/>`
)

// doc builds a document: declaration on line 1, root on line 2, rootMD on
// line 3 and entry i on line 4+i.
func doc(rootMD string, entries ...string) string {
	var b strings.Builder
	b.WriteString(xmlDecl + "\n" + rootOpen + "\n" + rootMD + "\n")
	for _, e := range entries {
		b.WriteString(e + "\n")
	}
	b.WriteString("</urlset>\n")
	return b.String()
}

// ent is a notification entry with the given rs:md attributes.
func ent(loc, mdAttrs string) string {
	return `<url><loc>` + loc + `</loc><rs:md ` + mdAttrs + `/></url>`
}

func okEnt(i int) string {
	return ent(fmt.Sprintf("http://example.com/r%d", i), fmt.Sprintf(`change="updated" datetime="2013-01-03T00:0%d:00Z"`, i))
}

type ruleCase struct {
	name      string
	xml       string
	rule      Rule
	entry     int // expected entry index (-1 root)
	line      int // expected line, 0 to skip the check
	lenientOK bool
}

var ruleCases = []ruleCase{
	{"WellFormed_Mismatch", doc(notifMD, `<url><loc>x</url>`), RuleWellFormed, -1, 4, false},
	{"WellFormed_BadUTF8", doc(notifMD, ent("http://e/\xff", `change="updated"`)), RuleWellFormed, -1, 4, false},
	{"WellFormed_UnknownEntity", doc(notifMD, ent("http://e/&nbsp;", `change="updated"`)), RuleWellFormed, -1, 4, false},
	{"WellFormed_TwoRoots", doc(notifMD) + rootOpen + "</urlset>", RuleWellFormed, -1, 0, false},
	{"WellFormed_TextAfterRoot", doc(notifMD) + "junk", RuleWellFormed, -1, 0, false},
	{"DTD_Doctype", xmlDecl + "\n<!DOCTYPE urlset [<!ENTITY x \"y\">]>\n" + rootOpen + notifMD + "</urlset>", RuleDTD, -1, 2, false},
	{"Limits_Depth", doc(notifMD, `<url><loc>x</loc><x:a xmlns:x="urn:x">`+strings.Repeat("<x:a>", MaxDepth)+strings.Repeat("</x:a>", MaxDepth+1)+`</url>`), RuleLimits, -1, 4, false},
	{"Namespaces_RootNS", strings.Replace(doc(notifMD), "sitemap/0.9", "sitemap/0.8", 1), RuleNamespaces, -1, 2, false},
	{"Namespaces_UnknownMDAttr", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-03T00:01:00Z" colour="red"`)), RuleNamespaces, 0, 4, true},
	{"Namespaces_PrefixedRSAttr", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-03T00:01:00Z" rs:foo="x"`)), RuleNamespaces, 0, 4, true},
	{"Namespaces_UndeclaredPrefix", doc(notifMD, ent("http://e/a", `change="updated" q:x="1"`)), RuleNamespaces, -1, 4, false},
	{"Structure_Root", xmlDecl + "\n<feed xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"/>", RuleStructure, -1, 2, false},
	{"Structure_TwoLocs", doc(notifMD, `<url><loc>http://e/a</loc><loc>http://e/b</loc><rs:md change="updated"/></url>`), RuleStructure, 0, 4, false},
	{"Structure_UnknownSitemapElement", doc(notifMD, `<url><loc>http://e/a</loc><image/><rs:md change="updated" datetime="2013-01-03T00:01:00Z"/></url>`), RuleStructure, 0, 4, true},
	{"RootMD_Missing", doc(`<rs:ln rel="up" href="http://e/cl"/>`, okEnt(1)), RuleRootMD, -1, 2, false},
	{"RootMD_NoCapability", doc(`<rs:md from="2013-01-03T00:00:00Z"/>`, okEnt(1)), RuleRootMD, -1, 3, false},
	{"Capability_NotificationIndex", strings.ReplaceAll(doc(notifMD), "urlset", "sitemapindex"), RuleCapability, -1, 3, false},
	{"RootAttributes_NotificationWithoutUntil", doc(`<rs:md capability="change-notification" from="2013-01-03T00:00:00Z"/>`, okEnt(1)), RuleRootAttributes, -1, 3, false},
	{"RootAttributes_ChangeListWithoutFrom", doc(`<rs:md capability="changelist"/>`, okEnt(1)), RuleRootAttributes, -1, 3, false},
	{"RootAttributes_ResourceListWithoutAt", doc(`<rs:md capability="resourcelist"/>`, `<url><loc>http://e/a</loc></url>`), RuleRootAttributes, -1, 3, false},
	{"FromUntil_RootReversed", doc(`<rs:md capability="change-notification" from="2013-01-03T00:10:00Z" until="2013-01-03T00:00:00Z"/>`), RuleFromUntil, -1, 3, false},
	{"FromUntil_EntryReversed", doc(`<rs:md capability="changelist-archive"/>`, `<url><loc>http://e/a</loc><rs:md from="2013-01-02T00:00:00Z" until="2013-01-01T00:00:00Z"/></url>`), RuleFromUntil, 0, 4, false},
	{"EntryMD_Missing", doc(notifMD, okEnt(1), `<url><loc>http://e/a</loc></url>`), RuleEntryMD, 1, 5, false},
	{"EntryCapability_CapabilityList", doc(`<rs:md capability="capabilitylist"/>`, `<url><loc>http://e/a</loc><rs:md/></url>`), RuleEntryCapability, 0, 4, false},
	{"EntryCapability_Description", doc(`<rs:md capability="description"/>`, `<url><loc>http://e/a</loc><rs:md capability="changelist"/></url>`), RuleEntryCapability, 0, 4, true},
	{"Hub_Missing", doc(`<rs:md capability="capabilitylist"/>`, `<url><loc>http://e/topic</loc><rs:md capability="change-notification"/></url>`), RuleHub, 0, 4, true},
	{"Change_Invalid", doc(notifMD, okEnt(1), ent("http://e/a", `change="modified" datetime="2013-01-03T00:02:00Z"`)), RuleChange, 1, 5, false},
	{"Change_Missing", doc(notifMD, ent("http://e/a", `datetime="2013-01-03T00:02:00Z"`)), RuleChange, 0, 4, false},
	{"ChangeTime_Missing", doc(notifMD, okEnt(1), ent("http://e/a", `change="deleted"`)), RuleChangeTime, 1, 5, true},
	{"Order_Backwards", doc(notifMD, okEnt(1), okEnt(3), okEnt(2)), RuleOrder, 2, 6, true},
	{"Order_LastmodFallback", doc(`<rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>`,
		`<url><loc>http://e/a</loc><lastmod>2013-01-02</lastmod><rs:md change="updated"/></url>`,
		`<url><loc>http://e/b</loc><lastmod>2013-01-01T12:00Z</lastmod><rs:md change="updated"/></url>`), RuleOrder, 1, 5, true},
	{"DatetimeRange_AfterUntil", doc(notifMD, okEnt(1), okEnt(2), okEnt(3), ent("http://e/a", `change="updated" datetime="2013-01-04T00:00:00Z"`)), RuleDatetimeRange, 3, 7, false},
	{"DatetimeRange_BeforeFrom", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-02T23:59:59.999Z"`)), RuleDatetimeRange, 0, 4, false},
	{"DateTime_Syntax", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-03 00:01:00"`)), RuleDateTime, 0, 4, false},
	{"DateTime_Lastmod", doc(notifMD, `<url><loc>http://e/a</loc><lastmod>2013-02-30</lastmod><rs:md change="updated"/></url>`), RuleDateTime, 0, 4, false},
	{"Hash_UnknownAlg", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-03T00:01:00Z" hash="crc32:0000abcd"`)), RuleHash, 0, 4, true},
	{"Hash_WrongLength", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-03T00:01:00Z" hash="md5:abc"`)), RuleHash, 0, 4, true},
	{"Hash_Syntax", doc(notifMD, ent("http://e/a", `change="updated" datetime="2013-01-03T00:01:00Z" hash="md5"`)), RuleHash, 0, 4, false},
	{"Length_Negative", doc(notifMD, ent("http://e/a", `change="updated" length="-1"`)), RuleLength, 0, 4, false},
	{"Pri_Zero", doc(notifMD, `<url><loc>http://e/a</loc><rs:md change="updated"/><rs:ln rel="duplicate" href="http://m/a" pri="0"/></url>`), RulePri, 0, 4, false},
	{"Pri_TooLarge", doc(notifMD, `<url><loc>http://e/a</loc><rs:md change="updated"/><rs:ln rel="duplicate" href="http://m/a" pri="1000000"/></url>`), RulePri, 0, 4, false},
	{"Link_NoRel", doc(notifMD + "\n" + `<rs:ln href="http://e/cl"/>`), RuleLink, -1, 4, false},
	{"Link_NoHref", doc(notifMD, okEnt(1), `<url><loc>http://e/a</loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/><rs:ln rel="duplicate"/></url>`), RuleLink, 1, 5, false},
	{"Loc_Missing", doc(notifMD, `<url><rs:md change="updated"/></url>`), RuleLoc, 0, 4, false},
	{"AbsoluteURI_RelativeLoc", doc(notifMD, okEnt(1), ent("../../x", `change="updated" datetime="2013-01-03T00:02:00Z"`)), RuleAbsoluteURI, 1, 5, true},
	{"AbsoluteURI_LocNotHTTP", doc(notifMD, ent("ftp://e/a", `change="updated" datetime="2013-01-03T00:02:00Z"`)), RuleAbsoluteURI, 0, 4, true},
	{"AbsoluteURI_LocWithoutHost", doc(notifMD, ent("http:/e/a", `change="updated" datetime="2013-01-03T00:02:00Z"`)), RuleAbsoluteURI, 0, 4, true},
	{"AbsoluteURI_RelativeRootHref", doc(notifMD + "\n" + `<rs:ln rel="up" href="../capabilitylist.xml"/>`), RuleAbsoluteURI, -1, 4, true},
	{"AbsoluteURI_RelativeEntryHref", doc(notifMD, `<url><loc>http://e/a</loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/><rs:ln rel="duplicate" href="/mirror/a"/></url>`), RuleAbsoluteURI, 0, 4, true},
	{"Loc_Empty", doc(notifMD, okEnt(1), `<url><loc>  </loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/></url>`), RuleLoc, 1, 5, false},
}

func TestValidate_Rules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []Mode{Strict, Lenient} {
				_, err := Parse(strings.NewReader(tc.xml), Options{Mode: mode})
				if mode == Lenient && tc.lenientOK {
					if err != nil {
						t.Fatalf("lenient: unexpected error %v", err)
					}
					continue
				}
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("%s: got %v, want a *ValidationError", mode, err)
				}
				if ve.Rule != tc.rule || ve.Entry != tc.entry || tc.line != 0 && ve.Line != tc.line {
					t.Fatalf("%s: got rule %s entry %d line %d (%v), want rule %s entry %d line %d",
						mode, ve.Rule, ve.Entry, ve.Line, err, tc.rule, tc.entry, tc.line)
				}
				if !errors.Is(err, tc.rule) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("errors.Is does not match rule %s / ErrInvalid", tc.rule)
				}
			}
		})
	}
}

// TestValidate_EveryRuleHasACase makes sure the table above covers every rule.
func TestValidate_EveryRuleHasACase(t *testing.T) {
	all := []Rule{RuleWellFormed, RuleDTD, RuleLimits, RuleMaxBytes, RuleMaxEntries, RuleNamespaces,
		RuleStructure, RuleRootMD, RuleCapability, RuleRootAttributes, RuleFromUntil, RuleEntryMD,
		RuleEntryCapability, RuleHub, RuleChange, RuleChangeTime, RuleOrder, RuleDatetimeRange,
		RuleDateTime, RuleHash, RuleLength, RulePri, RuleLink, RuleLoc, RuleAbsoluteURI, RuleFuture}
	covered := map[Rule]bool{RuleMaxBytes: true, RuleMaxEntries: true, RuleFuture: true} // own tests
	for _, tc := range ruleCases {
		covered[tc.rule] = true
	}
	for _, r := range all {
		if !covered[r] {
			t.Errorf("rule %s has no failing case", r)
		}
	}
}

func TestValidate_DatetimeOutsideFromUntil(t *testing.T) {
	x := doc(notifMD, okEnt(1), okEnt(2), okEnt(3), ent("http://e/a", `change="updated" datetime="2013-01-04T00:00:00Z"`))
	_, err := Parse(strings.NewReader(x), Options{})
	want := "changefeed: rule datetime-range: entry 3 (line 7): datetime 2013-01-04T00:00:00Z after until 2013-01-03T00:10:00Z"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestValidate_MaxEntries(t *testing.T) {
	x := doc(notifMD, okEnt(1), okEnt(2), okEnt(3))
	_, err := Parse(strings.NewReader(x), Options{MaxEntries: 2, Mode: Lenient})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Rule != RuleMaxEntries || ve.Entry != 2 || ve.Line != 6 {
		t.Fatalf("got %v, want max-entries at entry 2 line 6", err)
	}
	if _, err := Parse(strings.NewReader(x), Options{MaxEntries: 3}); err != nil {
		t.Fatalf("3 entries with limit 3: %v", err)
	}
	d, _ := Parse(strings.NewReader(x), Options{})
	if err := Validate(d, Options{MaxEntries: 2}); !errors.Is(err, RuleMaxEntries) {
		t.Fatalf("Validate: got %v, want max-entries", err)
	}
}

func TestValidate_MaxBytes(t *testing.T) {
	x := doc(notifMD, okEnt(1), okEnt(2), okEnt(3))
	for _, mode := range []Mode{Strict, Lenient} {
		_, err := Parse(strings.NewReader(x), Options{Mode: mode, MaxBytes: int64(len(x) - 1)})
		if !errors.Is(err, RuleMaxBytes) {
			t.Fatalf("%s: got %v, want max-bytes", mode, err)
		}
		if _, err := Parse(strings.NewReader(x), Options{Mode: mode, MaxBytes: int64(len(x))}); err != nil {
			t.Fatalf("%s: document of exactly MaxBytes: %v", mode, err)
		}
	}
}

func TestValidate_InMemory(t *testing.T) {
	from := NewDateTime(time.Date(2013, 1, 3, 0, 0, 0, 0, time.UTC))
	until := NewDateTime(time.Date(2013, 1, 3, 0, 10, 0, 0, time.UTC))
	d := &Document{Header: Header{MD: MD{Capability: CapChangeNotification, From: from, Until: until, Length: -1}}}
	d.Entries = append(d.Entries, Entry{Loc: "http://e/a", MD: &MD{Change: Created, Length: -1,
		DateTime: NewDateTime(time.Date(2013, 1, 3, 0, 5, 0, 0, time.UTC))}})
	if err := Validate(d, Options{}); err != nil {
		t.Fatalf("valid document: %v", err)
	}
	d.Entries[0].MD.DateTime.Time = d.Entries[0].MD.DateTime.Time.Add(time.Second)
	if err := Validate(d, Options{}); !errors.Is(err, RuleDateTime) {
		t.Fatalf("Time/Raw mismatch: got %v", err)
	}
	d.Entries[0].MD.DateTime = NewDateTime(time.Date(2013, 1, 3, 0, 11, 0, 0, time.UTC))
	err := Validate(d, Options{})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Rule != RuleDatetimeRange || ve.Entry != 0 || ve.Line != 0 {
		t.Fatalf("got %v, want datetime-range at entry 0", err)
	}
	if err := Validate(nil, Options{}); err == nil {
		t.Fatal("nil document accepted")
	}
}

func TestDecoder_Stream(t *testing.T) {
	x := doc(notifMD, okEnt(1), okEnt(2))
	d := NewDecoder(strings.NewReader(x), Options{})
	h, err := d.Header()
	if err != nil || h.MD.Capability != CapChangeNotification || h.MD.Until.Raw != "2013-01-03T00:10:00Z" {
		t.Fatalf("header: %+v %v", h, err)
	}
	var locs []string
	for {
		e, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, e.Loc)
	}
	if strings.Join(locs, ",") != "http://example.com/r1,http://example.com/r2" {
		t.Fatalf("entries %v", locs)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("after EOF: %v", err)
	}
	// Errors are sticky.
	d = NewDecoder(strings.NewReader(doc(notifMD, okEnt(2), okEnt(1), okEnt(3))), Options{})
	_, err1 := d.Next()
	_, err2 := d.Next()
	_, err3 := d.Next()
	if err1 != nil || !errors.Is(err2, RuleOrder) || err3 != err2 {
		t.Fatalf("got %v / %v / %v", err1, err2, err3)
	}
}

func TestDecoder_ReaderError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Parse(io.MultiReader(strings.NewReader(xmlDecl+rootOpen), errReader{boom}), Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want wrapped reader error", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// Change Notification 1.0's payload capability is accepted on input in both
// modes (the hub takes it from Sources not yet on 1.0.1).
func TestValidate_Accepts10NotificationCapability(t *testing.T) {
	in := doc(strings.Replace(notifMD, "change-notification", "changelist-notification", 1), okEnt(1))
	for _, m := range []Mode{Strict, Lenient} {
		d, err := Parse(strings.NewReader(in), Options{Mode: m})
		if err != nil || d.MD.Capability != CapChangeListNotification {
			t.Fatalf("%s: %v", m, err)
		}
	}
}

// Rule absolute-uri accepts what the Sitemap protocol and ResourceSync
// allow: http(s) locs with a host, and links in any scheme (the gsiftp
// mirror of core example 24).
func TestValidate_AbsoluteURIAccepted(t *testing.T) {
	for _, tc := range []struct{ loc, href string }{
		{"http://e/a", "http://m/a"},
		{"HTTPS://e.example.org:8443/a?b=c#d", "gsiftp://gridftp.example.com/res1"},
		{"https://e", "urn:isbn:0451450523"},
		{"http://user@e/a", "mailto:someone@example.com"},
	} {
		x := doc(notifMD, `<url><loc>`+tc.loc+`</loc><rs:md change="updated" datetime="2013-01-03T00:02:00Z"/><rs:ln rel="duplicate" href="`+tc.href+`"/></url>`)
		if _, err := Parse(strings.NewReader(x), Options{}); err != nil {
			t.Errorf("loc %q href %q: %v", tc.loc, tc.href, err)
		}
	}
}
