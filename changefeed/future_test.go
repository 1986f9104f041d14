package changefeed

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Rule future: from, until and each change time must not lie after the
// latest instant the caller accepts.
func TestCheckNotAfter_RuleFuture(t *testing.T) {
	latest := time.Date(2013, 1, 3, 0, 10, 0, 0, time.UTC)
	lastmodEnt := func(lm string) string {
		return `<url><loc>http://e/a</loc><lastmod>` + lm + `</lastmod><rs:md change="updated"/></url>`
	}
	for _, tc := range []struct {
		name  string
		xml   string
		entry int    // -1 root; -2 no error
		field string // named in the message
	}{
		{"AllAtLatest", doc(notifMD, okEnt(1)), -2, ""},
		{"UntilAfter", doc(`<rs:md capability="change-notification" from="2013-01-03T00:00:00Z" until="9999-12-31T23:59:59Z"/>`), -1, "root rs:md until 9999-12-31T23:59:59Z"},
		{"FromAfter", doc(`<rs:md capability="change-notification" from="2013-01-03T00:10:01Z" until="2013-01-03T00:20:00Z"/>`), -1, "root rs:md from 2013-01-03T00:10:01Z"},
		{"ChangeListFromAfter", doc(`<rs:md capability="changelist" from="2014-01-01T00:00:00Z"/>`), -1, "root rs:md from"},
		{"EntryDatetimeAfter", doc(`<rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>`, okEnt(1),
			ent("http://e/b", `change="created" datetime="2013-01-03T00:10:00.001Z"`)), 1, "rs:md datetime 2013-01-03T00:10:00.001Z"},
		{"LastmodStandsForDatetime", doc(`<rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>`, lastmodEnt("2099-01-01")), 0, "lastmod 2099-01-01"},
		{"DatetimeWinsOverLastmod", doc(`<rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>`,
			`<url><loc>http://e/a</loc><lastmod>2099-01-01</lastmod><rs:md change="updated" datetime="2013-01-02T00:00:00Z"/></url>`), -2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(tc.xml), Options{Mode: Lenient})
			if err != nil {
				t.Fatal(err)
			}
			err = CheckNotAfter(d, latest)
			if tc.entry == -2 {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Rule != RuleFuture || ve.Entry != tc.entry || !errors.Is(err, RuleFuture) {
				t.Fatalf("got %v, want rule future at entry %d", err, tc.entry)
			}
			if !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "2013-01-03T00:10:00Z") {
				t.Fatalf("%v: want the field %q and the limit named", err, tc.field)
			}
		})
	}
	if err := CheckNotAfter(nil, latest); err != nil {
		t.Fatal(err)
	}
}
