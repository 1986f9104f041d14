package main

import (
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/mirror"
)

// Lines are for people: no zero times, no "1 entries", nothing empty
// where an event lacks a value, and a patch says what it did.
func TestLine_ReadsAsEnglish(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		e        mirror.Event
		want     []string
		mustNot  []string
		wantTail string
	}{
		{e: mirror.Event{Kind: mirror.EventNotification, From: at, Until: at, Entries: 1}, want: []string{"1 entry"}, mustNot: []string{"entries"}},
		{e: mirror.Event{Kind: mirror.EventNotification, Until: at, Entries: 3}, want: []string{"[no time, 2026-01-02T03:04:05Z]", "3 entries"}},
		{e: mirror.Event{Kind: mirror.EventCaughtUp, Entries: 0}, want: []string{"caughtup 0 entries in 0s"}, mustNot: []string{"0001-01-01", " to "}},
		{e: mirror.Event{Kind: mirror.EventCatchUp, Total: 1}, want: []string{"1 list"}, mustNot: []string{"0001", "since"}},
		{e: mirror.Event{Kind: dataset.EventPatch, Path: "h/p/1.nqud", Entries: 2, Total: 1}, want: []string{"patch applied h/p/1.nqud: 2 changes, the dataset holds 1 quad"}},
		{e: mirror.Event{Kind: mirror.EventFile, Loc: "http://s/x"}, wantTail: "file http://s/x"},
	} {
		c.e.Time = at
		got := line(c.e)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("line %q lacks %q", got, w)
			}
		}
		for _, w := range append(c.mustNot, "0001-01-01", "  ") {
			if strings.Contains(got, w) {
				t.Errorf("line %q holds %q", got, w)
			}
		}
		if c.wantTail != "" && !strings.HasSuffix(got, c.wantTail) {
			t.Errorf("line %q, want it to end with %q", got, c.wantTail)
		}
	}
}
