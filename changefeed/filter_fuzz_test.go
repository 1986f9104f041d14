package changefeed

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseFilter: an accepted filter holds only distinct absolute
// http(s) prefixes within the bounds and distinct known change types, an
// empty value is never accepted, and parsing the result again gives it
// back.
func FuzzParseFilter(f *testing.F) {
	f.Add("http://a.example/x/", "", "created,deleted", true, false)
	f.Add("", "", "", true, true)
	f.Add("not a uri \x00\n", "https://a.example/", ",,,", true, true)
	f.Add("http://a.example/", "http://a.example/", "created,created", true, true)
	f.Fuzz(func(t *testing.T, p1, p2, change string, twoPrefixes, hasChange bool) {
		prefixes := []string{p1}
		if twoPrefixes {
			prefixes = append(prefixes, p2)
		}
		var changes []string
		if hasChange {
			changes = []string{change}
		}
		got, err := ParseFilter(prefixes, changes)
		if err != nil {
			return
		}
		if slices.Contains(prefixes, "") || (hasChange && strings.TrimSpace(change) == "") {
			t.Fatalf("accepted an empty value: %q %q", prefixes, changes)
		}
		for i, p := range got.Prefixes {
			if len(p) > MaxFilterPrefixLen || !(strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://")) || slices.Contains(got.Prefixes[:i], p) {
				t.Fatalf("accepted prefix %q of %q", p, got.Prefixes)
			}
		}
		if len(got.Changes) > 3 {
			t.Fatalf("%d change types", len(got.Changes))
		}
		var list []string
		for i, c := range got.Changes {
			if slices.Contains(got.Changes[:i], c) {
				t.Fatalf("change %q twice", c)
			}
			list = append(list, string(c))
		}
		var again Filter
		if len(list) > 0 {
			again, err = ParseFilter(got.Prefixes, []string{strings.Join(list, ",")})
		} else {
			again, err = ParseFilter(got.Prefixes, nil)
		}
		if err != nil || !slices.Equal(again.Prefixes, got.Prefixes) || !slices.Equal(again.Changes, got.Changes) {
			t.Fatalf("%+v parsed again as %+v %v", got, again, err)
		}
	})
}
