package admin

import (
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/rshub/rshub/hub"
)

// FuzzParseAttemptFilter checks that any status parameter is refused with
// a short 400 or selects exactly the statuses it names.
func FuzzParseAttemptFilter(f *testing.F) {
	for _, s := range []string{"", "2xx", "4xx", "5xx", "error", "404", "599", "100", "6xx", "2XX", "099", "+200", " 200", "20", "2000", "errors"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := parseAttemptFilter(s)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != http.StatusBadRequest || len(ae.msg) > 1024 {
				t.Fatalf("parseAttemptFilter(%q): %v, want a short 400", s, err)
			}
			return
		}
		for status := 0; status < 1000; status++ {
			want := s == "" || (s == AttemptsError && status == 0) || (status > 0 && (strconv.Itoa(status) == s || strconv.Itoa(status/100)+"xx" == s))
			if got := flt.keep(hub.Attempt{Status: status}); got != want {
				t.Fatalf("status=%q keeps %d: %v, want %v", s, status, got, want)
			}
		}
	})
}

func TestParseAttemptKey_OnlyWhatStringMakes(t *testing.T) {
	for _, s := range []string{"", "1.2", "1.2.3.4", "01.2.3", "1.-2.3", "1.2.+3", "1..3", "99999999999999999999.1.1", "1.2.99999999999", "a.b.c"} {
		if k, ok := parseAttemptKey(s); ok {
			t.Errorf("parseAttemptKey(%q) = %+v, want refused", s, k)
		}
	}
	k := attemptKey{nanos: 1741942818000000000, seq: 1 << 63, attempt: 7}
	if got, ok := parseAttemptKey(k.String()); !ok || got != k {
		t.Errorf("round trip of %+v: %+v, %v", k, got, ok)
	}
}
