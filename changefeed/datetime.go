package changefeed

import (
	"errors"
	"time"
)

// ParseDateTime parses a W3C Datetime (the ISO 8601 profile of
// https://www.w3.org/TR/NOTE-datetime) in any granularity the profile allows:
// YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mmTZD, YYYY-MM-DDThh:mm:ssTZD and
// YYYY-MM-DDThh:mm:ss.sTZD with one or more fraction digits, where TZD is Z
// or +hh:mm or -hh:mm. The result keeps s as Raw; its Time is in UTC and, for
// reduced granularities, is the start of the period. The empty string is an
// error.
func ParseDateTime(s string) (DateTime, error) {
	t, err := parseW3C(s)
	if err != nil {
		return DateTime{}, err
	}
	return DateTime{Time: t, Raw: s}, nil
}

// NewDateTime returns the DateTime for t in the recommended form
// YYYY-MM-DDThh:mm:ss[.s]Z (UTC, fraction only when non-zero).
func NewDateTime(t time.Time) DateTime {
	t = t.UTC()
	return DateTime{Time: t, Raw: t.Format(time.RFC3339Nano)}
}

// maxFractionDigits bounds the fraction of seconds; digits after the ninth
// are kept in Raw but do not change Time.
const maxFractionDigits = 32

var errDateTime = errors.New("not a W3C datetime")

// parseW3C is generic over string and []byte so the decoder can parse
// without converting first.
func parseW3C[S string | []byte](s S) (time.Time, error) {
	n := len(s)
	if n < 4 {
		return time.Time{}, errDateTime
	}
	year, ok := digits(s, 0, 4)
	if !ok {
		return time.Time{}, errDateTime
	}
	month, day := 1, 1
	hour, minute, sec, nsec := 0, 0, 0, 0
	if n == 4 {
		return mkTime(year, month, day, 0, 0, 0, 0, 0)
	}
	if n < 7 || s[4] != '-' {
		return time.Time{}, errDateTime
	}
	if month, ok = digits(s, 5, 2); !ok {
		return time.Time{}, errDateTime
	}
	if n == 7 {
		return mkTime(year, month, day, 0, 0, 0, 0, 0)
	}
	if n < 10 || s[7] != '-' {
		return time.Time{}, errDateTime
	}
	if day, ok = digits(s, 8, 2); !ok {
		return time.Time{}, errDateTime
	}
	if n == 10 {
		return mkTime(year, month, day, 0, 0, 0, 0, 0)
	}
	// YYYY-MM-DDThh:mm
	if n < 17 || s[10] != 'T' || s[13] != ':' {
		return time.Time{}, errDateTime
	}
	if hour, ok = digits(s, 11, 2); !ok {
		return time.Time{}, errDateTime
	}
	if minute, ok = digits(s, 14, 2); !ok {
		return time.Time{}, errDateTime
	}
	i := 16
	if s[i] == ':' {
		if n < i+3 {
			return time.Time{}, errDateTime
		}
		if sec, ok = digits(s, i+1, 2); !ok {
			return time.Time{}, errDateTime
		}
		i += 3
		if i < n && s[i] == '.' {
			i++
			start := i
			for i < n && s[i] >= '0' && s[i] <= '9' {
				if i-start < 9 {
					nsec = nsec*10 + int(s[i]-'0')
				}
				i++
			}
			nd := i - start
			if nd == 0 || nd > maxFractionDigits {
				return time.Time{}, errDateTime
			}
			for k := nd; k < 9; k++ {
				nsec *= 10
			}
		}
	}
	// TZD
	if i >= n {
		return time.Time{}, errDateTime
	}
	offset := 0
	switch s[i] {
	case 'Z':
		if i+1 != n {
			return time.Time{}, errDateTime
		}
	case '+', '-':
		if n != i+6 || s[i+3] != ':' {
			return time.Time{}, errDateTime
		}
		oh, ok1 := digits(s, i+1, 2)
		om, ok2 := digits(s, i+4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, errDateTime
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, errDateTime
	}
	return mkTime(year, month, day, hour, minute, sec, nsec, offset)
}

func digits[S string | []byte](s S, at, n int) (int, bool) {
	if at+n > len(s) {
		return 0, false
	}
	v := 0
	for i := at; i < at+n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func mkTime(year, month, day, hour, minute, sec, nsec, offset int) (time.Time, error) {
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, errDateTime
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if offset != 0 {
		t = t.Add(-time.Duration(offset) * time.Second)
	}
	return t, nil
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
