package changefeed

import (
	"testing"
	"time"
)

func TestParseDateTime_Granularities(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	cases := []struct {
		in   string
		want time.Time
	}{
		{"2013", utc(2013, 1, 1, 0, 0, 0, 0)},
		{"2013-07", utc(2013, 7, 1, 0, 0, 0, 0)},
		{"2013-07-16", utc(2013, 7, 16, 0, 0, 0, 0)},
		{"2013-07-16T19:20Z", utc(2013, 7, 16, 19, 20, 0, 0)},
		{"2013-07-16T19:20+01:00", utc(2013, 7, 16, 18, 20, 0, 0)},
		{"2013-07-16T19:20:30Z", utc(2013, 7, 16, 19, 20, 30, 0)},
		{"2013-07-16T19:20:30-05:30", utc(2013, 7, 17, 0, 50, 30, 0)},
		{"2013-07-16T19:20:30.45+01:00", utc(2013, 7, 16, 18, 20, 30, 450000000)},
		{"2013-07-16T19:20:30.123456789123Z", utc(2013, 7, 16, 19, 20, 30, 123456789)},
		{"2012-02-29", utc(2012, 2, 29, 0, 0, 0, 0)},
		{"2000-02-29T00:00:00Z", utc(2000, 2, 29, 0, 0, 0, 0)},
	}
	for _, c := range cases {
		got, err := ParseDateTime(c.in)
		if err != nil || !got.Time.Equal(c.want) || got.Raw != c.in || got.Time.Location() != time.UTC {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseDateTime_Invalid(t *testing.T) {
	for _, in := range []string{
		"", "201", "13", "2013-", "2013-7", "2013-13", "2013-00", "2013-02-29", "1900-02-29", "2013-04-31",
		"2013-07-16T", "2013-07-16T19:20", "2013-07-16T19Z", "2013-07-16T24:00Z", "2013-07-16T19:60Z",
		"2013-07-16T19:20:60Z", "2013-07-16T19:20:30", "2013-07-16T19:20:30.Z", "2013-07-16T19:20:30,5Z",
		"2013-07-16T19:20:30+0100", "2013-07-16T19:20:30+24:00", "2013-07-16T19:20:30z", "2013-07-16 19:20:30Z",
		"2013-07-16T19:20:30ZZ", "+2013-07-16", "2013-07-16T19:20:30.123456789012345678901234567890123Z",
		"２０１３",
	} {
		if d, err := ParseDateTime(in); err == nil {
			t.Errorf("ParseDateTime(%q) = %v, want error", in, d)
		}
	}
}

func TestNewDateTime(t *testing.T) {
	tm := time.Date(2013, 1, 3, 1, 2, 3, 500000000, time.FixedZone("x", 3600))
	d := NewDateTime(tm)
	if d.Raw != "2013-01-03T00:02:03.5Z" || !d.Time.Equal(tm) {
		t.Fatalf("NewDateTime = %+v", d)
	}
	back, err := ParseDateTime(d.Raw)
	if err != nil || !back.Time.Equal(d.Time) {
		t.Fatalf("re-parse: %v %v", back, err)
	}
}

func FuzzDateTime(f *testing.F) {
	for _, s := range []string{"2013", "2013-07", "2013-07-16", "2013-07-16T19:20Z", "2013-07-16T19:20:30.45+01:00", "2013-02-29", "9999-12-31T23:59:59.999999999-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDateTime(s)
		if err != nil {
			return
		}
		if d.Raw != s || d.Time.Location() != time.UTC {
			t.Fatalf("Raw %q / location %v", d.Raw, d.Time.Location())
		}
		// The canonical UTC form of an accepted datetime parses to the same instant.
		c := NewDateTime(d.Time)
		back, err := ParseDateTime(c.Raw)
		if d.Time.Year() >= 0 && d.Time.Year() <= 9999 && (err != nil || !back.Time.Equal(d.Time)) {
			t.Fatalf("%q -> %q -> %v, %v", s, c.Raw, back.Time, err)
		}
		// Agreement with the standard library on full-precision forms.
		if len(s) >= 20 && s[len(s)-1] == 'Z' {
			if st, err := time.Parse(time.RFC3339Nano, s); err == nil && !st.Equal(d.Time) {
				t.Fatalf("%q: time.Parse %v, ours %v", s, st, d.Time)
			}
		}
	})
}
