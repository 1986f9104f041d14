package admin

import (
	"errors"
	"net/http"
	"testing"

	"github.com/rshub/rshub/hub"
)

// FuzzParseCursor checks that any cursor parameter is either refused with
// a 400 or parsed into a cursor that String encodes back to one parsing to
// the same place.
func FuzzParseCursor(f *testing.F) {
	for _, c := range []cursor{
		{kind: kindShards},
		{kind: kindShards, shard: 63},
		{kind: kindShards, shard: hub.ShardOf("0123456789abcdef0123456789abcdef"), after: "0123456789abcdef0123456789abcdef"},
		{kind: kindTopic, after: "0123456789abcdef0123456789abcdef"},
		{kind: kindFailing, after: "ffffffffffffffffffffffffffffffff"},
		{kind: kindChannel, after: "http://example.com/dataset1/change/"},
		{kind: kindDeliveries, after: "0123456789abcdef0123456789abcdef"},
		{kind: kindAttempts, after: "1741942818000000000.19.1"},
		{kind: kindAttempts, after: "0.0.0"},
	} {
		f.Add(c.String(), byte(c.kind))
	}
	f.Add("", byte(kindShards))
	f.Add("czY0Og", byte(kindShards)) // s64:
	f.Add("!!!", byte(kindTopic))
	f.Fuzz(func(t *testing.T, s string, kind byte) {
		want := cursorKind(kind)
		c, err := parseCursor(s, want)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != http.StatusBadRequest {
				t.Fatalf("parseCursor(%q): %v, want a 400", s, err)
			}
			return
		}
		if c.kind != want {
			t.Fatalf("parseCursor(%q, %c) = kind %c", s, want, c.kind)
		}
		if s == "" {
			return
		}
		again, err := parseCursor(c.String(), want)
		if err != nil || again != c {
			t.Fatalf("parseCursor(%q) = %+v; its String parses to %+v, %v", s, c, again, err)
		}
		if len(c.String()) > maxCursorLen {
			t.Fatalf("cursor %+v encodes longer than maxCursorLen", c)
		}
	})
}

func TestParseLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"", DefaultLimit, true}, {"1", 1, true}, {"1000", 1000, true},
		{"0", 0, false}, {"-1", 0, false}, {"1001", 0, false}, {"ten", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := parseLimit(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseLimit(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
