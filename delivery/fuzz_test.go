package delivery

import "testing"

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
