package changefeed

import "time"

// Verdict classifies a notification's [from, until] window against the
// until of the last window accepted on the same channel (RSN-9).
type Verdict uint8

// Verdicts of CheckContinuity.
const (
	// First: there is no previous window.
	First Verdict = iota
	// Contiguous: from equals the previous until.
	Contiguous
	// Gap: from is after the previous until; the changes in between are missing.
	Gap
	// Overlap: from is before the previous until but until is after it.
	Overlap
	// OutOfOrder: the window ends at or before the previous until (a late or repeated notification).
	OutOfOrder
)

// String returns the verdict's lower-case name.
func (v Verdict) String() string {
	switch v {
	case First:
		return "first"
	case Contiguous:
		return "contiguous"
	case Gap:
		return "gap"
	case Overlap:
		return "overlap"
	case OutOfOrder:
		return "out-of-order"
	}
	return "verdict(" + itoa(int(v)) + ")"
}

// Window is a closed time interval [From, Until].
type Window struct{ From, Until time.Time }

// Continuity is the result of CheckContinuity.
type Continuity struct {
	Verdict Verdict
	Missing Window // the uncovered interval [lastUntil, from]; set only for Gap
}

// CheckContinuity compares a new window [from, until] with lastUntil, the
// until of the previous window on the channel. A zero lastUntil gives First.
// Otherwise from == lastUntil is Contiguous, from > lastUntil is a Gap whose
// Missing window is [lastUntil, from], until <= lastUntil is OutOfOrder and
// from < lastUntil < until is an Overlap. Instants are compared with
// time.Time.Equal/Before, so time zones do not matter. The caller is expected
// to have checked from <= until (rule from-until).
func CheckContinuity(lastUntil, from, until time.Time) Continuity {
	switch {
	case lastUntil.IsZero():
		return Continuity{Verdict: First}
	case from.Equal(lastUntil):
		return Continuity{Verdict: Contiguous}
	case from.After(lastUntil):
		return Continuity{Verdict: Gap, Missing: Window{From: lastUntil, Until: from}}
	case !until.After(lastUntil):
		return Continuity{Verdict: OutOfOrder}
	default:
		return Continuity{Verdict: Overlap}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
