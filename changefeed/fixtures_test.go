package changefeed

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// lenientOnly lists spec fixtures that are valid only in Lenient mode, with
// the rule Strict mode reports.
var lenientOnly = map[string]Rule{
	"core_ex27_patch_links.xml": RuleHash, // the spec's digests are placeholders
}

func specFixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/spec/*.xml")
	if err != nil || len(files) < 30 {
		t.Fatalf("spec fixtures: %v (%d files)", err, len(files))
	}
	return files
}

func TestSpecFixtures_DecodeValidateRoundTrip(t *testing.T) {
	for _, file := range specFixtures(t) {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			mode := Strict
			if rule, ok := lenientOnly[name]; ok {
				_, err := Parse(bytes.NewReader(data), Options{})
				if !errors.Is(err, rule) {
					t.Fatalf("strict: got %v, want rule %s", err, rule)
				}
				mode = Lenient
			}
			opt := Options{Mode: mode}
			doc, err := Parse(bytes.NewReader(data), opt)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if len(doc.Entries) == 0 {
				t.Fatal("no entries decoded")
			}
			if err := Validate(doc, opt); err != nil {
				t.Fatalf("validate: %v", err)
			}
			var out bytes.Buffer
			if err := Encode(&out, doc); err != nil {
				t.Fatalf("encode: %v", err)
			}
			doc2, err := Parse(bytes.NewReader(out.Bytes()), opt)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out.Bytes())
			}
			if !reflect.DeepEqual(doc, doc2) {
				t.Fatalf("round trip changed the model\nfirst:  %+v\nsecond: %+v", doc, doc2)
			}
		})
	}
}
