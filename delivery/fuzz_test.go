package delivery

import (
	"net/url"
	"testing"
)

// FuzzParseSchedule: any text either is refused or gives a valid schedule
// whose String parses back to the same schedule.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"1s,x2,max=1h,attempts=15,jitter=0.2", "1s,10s,1m", "10ms,x2,max=50ms,attempts=3,elapsed=24h", "", "x", "1s,x-1", "max=", "1h,attempts=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseSchedule(text)
		if err != nil {
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("ParseSchedule(%q) accepted an invalid schedule: %v", text, err)
		}
		again, err := ParseSchedule(s.String())
		if err != nil || again.String() != s.String() {
			t.Fatalf("String %q of ParseSchedule(%q) does not parse back: %v", s.String(), text, err)
		}
		for n := 1; n < 50; n++ {
			if d, more := s.Delay(n, 0.5); more && d < 0 {
				t.Fatalf("negative delay %v at attempt %d", d, n)
			}
		}
	})
}

// FuzzParseWSQuery: any query string is refused or gives a request naming
// at most one cursor.
func FuzzParseWSQuery(f *testing.F) {
	for _, s := range []string{"channels=*", "channels=a,b&since=12", "channels=a&since_time=2024-01-01T00:00:00Z&raw=1", "since=1&since_time=x", "channels=&since=-1", "channels=a%2Cb&raw=yes"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		r, err := parseWSQuery(q)
		if err != nil {
			return
		}
		if q.Get("since") != "" && q.Get("since_time") != "" {
			t.Fatalf("accepted both cursors: %q -> %+v", raw, r)
		}
	})
}
