package changefeed

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFrameworkFixtures_EachBreaksItsRule reads testdata/framework: each
// file is named after the rule it breaks (the part before "_"), which
// Strict mode reports.
func TestFrameworkFixtures_EachBreaksItsRule(t *testing.T) {
	files, err := filepath.Glob("testdata/framework/*.xml")
	if err != nil || len(files) < 6 {
		t.Fatalf("framework fixtures: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		name := filepath.Base(file)
		rule := Rule(name[:strings.IndexByte(name, '_')])
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(bytes.NewReader(data), Options{Mode: Strict})
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Rule != rule {
				t.Fatalf("got %v, want rule %s", err, rule)
			}
		})
	}
}

// TestFrameworkExamples_Golden checks what the decoder reads from the spec's
// Examples 1 and 2 (RSF-2, RSF-3, RSF-4, RSF-6).
func TestFrameworkExamples_Golden(t *testing.T) {
	type want struct {
		loc, capability, change, datetime, index string
	}
	tests := []struct {
		file string
		up   string
		urls []want
	}{
		{"framework_ex1_payload.xml", "http://example.com/dataset1/capabilitylist.xml", []want{
			{"http://example.com/resourceset1/resourcelist.xml", "resourcelist", "created", "2013-01-03T00:07:22Z", ""},
		}},
		{"framework_ex2_payload.xml", "", []want{
			{"http://example.com/dataset1/resourcelist.xml", "resourcelist", "created", "", "http://example.com/dataset1/resourcelist-index.xml"},
			{"http://example.com/dataset1/resourcedump.xml", "resourcedump", "created", "", ""},
			{"http://example.com/dataset1/changelist.xml", "changelist", "updated", "", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/spec", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := Parse(bytes.NewReader(data), Options{Mode: Strict})
			if err != nil {
				t.Fatal(err)
			}
			if doc.MD.Capability != CapFrameworkNotification || !doc.MD.From.IsZero() || !doc.MD.Until.IsZero() {
				t.Fatalf("root rs:md = %+v", doc.MD)
			}
			if got := doc.Link("up"); got != tt.up {
				t.Errorf("up = %q, want %q", got, tt.up)
			}
			if len(doc.Entries) != len(tt.urls) {
				t.Fatalf("%d entries, want %d", len(doc.Entries), len(tt.urls))
			}
			for i, w := range tt.urls {
				e := doc.Entries[i]
				idx := ""
				for _, l := range e.Links {
					if l.Rel == "index" {
						idx = l.Href
					}
				}
				got := want{e.Loc, string(e.MD.Capability), string(e.MD.Change), e.MD.DateTime.Raw, idx}
				if got != w {
					t.Errorf("entry %d = %+v, want %+v", i, got, w)
				}
			}
		})
	}
}

func TestFrameworkChanges_RSF5Table(t *testing.T) {
	tests := []struct {
		c                         Capability
		created, updated, deleted bool
	}{
		{CapResourceList, true, true, false},
		{CapResourceDump, true, false, false},
		{CapChangeList, true, true, false},
		{CapChangeDump, true, true, false},
		{CapCapabilityList, true, true, true},
		{CapDescription, true, true, true},
	}
	for _, tt := range tests {
		allowed, ok := FrameworkChanges(tt.c)
		if !ok {
			t.Fatalf("%s not allowed", tt.c)
		}
		has := func(c Change) bool {
			for _, a := range allowed {
				if a == c {
					return true
				}
			}
			return false
		}
		if has(Created) != tt.created || has(Updated) != tt.updated || has(Deleted) != tt.deleted {
			t.Errorf("%s: %v", tt.c, allowed)
		}
	}
	for _, c := range []Capability{CapChangeNotification, CapFrameworkNotification, CapResourceDumpManifest} {
		if _, ok := FrameworkChanges(c); ok {
			t.Errorf("%s allowed", c)
		}
	}
}

func TestFrameworkNotification_LenientAndWindow(t *testing.T) {
	bad, err := os.ReadFile("testdata/framework/framework-change_resourcelist_deleted.xml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(bytes.NewReader(bad), Options{Mode: Lenient}); err != nil {
		t.Errorf("lenient refused: %v", err)
	}
	withWindow := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="framework-notification" from="2013-01-03T00:00:00Z" until="2013-01-03T01:00:00Z"/>
<url><loc>http://example.com/cl.xml</loc><rs:md change="updated" capability="changelist" datetime="2013-01-03T00:30:00Z"/></url></urlset>`
	if _, err := Parse(strings.NewReader(withWindow), Options{Mode: Strict}); err != nil {
		t.Errorf("from/until refused: %v", err)
	}
}
