package delivery

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Schedule says when a failed delivery is tried again and when it is given
// up. It is a pure value: Delay computes the wait from the attempt number
// and a random number the caller supplies.
type Schedule struct {
	Initial    time.Duration // wait after the first failed attempt
	Max        time.Duration // cap on the wait before jitter (0: no cap)
	Multiplier float64       // growth of the wait per attempt (values below 1 mean 1)
	Jitter     float64       // spread of each wait, as a fraction: 0.2 means ±20%
	Attempts   int           // attempts in total, the first included (0: unlimited)
	MaxElapsed time.Duration // give up when the waits add up to more than this (0: no limit)
	// Steps, when set, lists the waits explicitly and replaces Initial,
	// Max and Multiplier: the wait after failed attempt n is Steps[n-1],
	// and the schedule is exhausted after len(Steps)+1 attempts unless
	// Attempts says fewer.
	Steps []time.Duration
}

// DefaultSchedule returns the schedule used when none is configured: 1s
// doubling up to 1h, ±20% jitter, 15 attempts, given up after 24h. The
// waits of the 14 retries add up to about 3h8m.
func DefaultSchedule() Schedule {
	return Schedule{
		Initial:    time.Second,
		Max:        time.Hour,
		Multiplier: 2,
		Jitter:     0.2,
		Attempts:   15,
		MaxElapsed: 24 * time.Hour,
	}
}

// base is the wait after failed attempt n (1-based) before jitter, and
// whether the schedule defines one.
func (s Schedule) base(n int) (time.Duration, bool) {
	if n < 1 {
		n = 1
	}
	if s.Steps != nil {
		if n > len(s.Steps) {
			return 0, false
		}
		return s.Steps[n-1], true
	}
	m := s.Multiplier
	if m < 1 {
		m = 1
	}
	d := float64(s.Initial) * math.Pow(m, float64(n-1))
	if s.Max > 0 && d > float64(s.Max) {
		return s.Max, true
	}
	if d > math.MaxInt64/2 {
		return time.Duration(math.MaxInt64 / 2), true
	}
	return time.Duration(d), true
}

// Delay returns how long to wait after failed attempt number attempt
// (1 after the first failure) before trying again, spread by rnd, a number
// in [0, 1): the wait is base×(1+Jitter×(2×rnd−1)). It returns false when
// the schedule is exhausted: attempt reached Attempts, Steps ran out, or
// the base waits so far, this one included, exceed MaxElapsed. Callers also
// check the time really elapsed against MaxElapsed, since requests take
// time too.
func (s Schedule) Delay(attempt int, rnd float64) (time.Duration, bool) {
	if attempt < 1 {
		attempt = 1
	}
	if s.Attempts > 0 && attempt >= s.Attempts {
		return 0, false
	}
	d, ok := s.base(attempt)
	if !ok {
		return 0, false
	}
	if s.MaxElapsed > 0 {
		var total time.Duration
		for n := 1; n <= attempt; n++ {
			b, _ := s.base(n)
			total += b
			if total > s.MaxElapsed {
				return 0, false
			}
		}
	}
	if s.Jitter > 0 {
		rnd = min(max(rnd, 0), 1)
		d = time.Duration(float64(d) * (1 + s.Jitter*(2*rnd-1)))
	}
	return max(d, 0), true
}

// String formats s in the syntax ParseSchedule reads.
func (s Schedule) String() string {
	var parts []string
	if s.Steps != nil {
		for _, d := range s.Steps {
			parts = append(parts, d.String())
		}
	} else {
		parts = append(parts, s.Initial.String(), "x"+strconv.FormatFloat(s.Multiplier, 'g', -1, 64))
		if s.Max > 0 {
			parts = append(parts, "max="+s.Max.String())
		}
	}
	parts = append(parts, "attempts="+strconv.Itoa(s.Attempts),
		"jitter="+strconv.FormatFloat(s.Jitter, 'g', -1, 64))
	if s.MaxElapsed > 0 {
		parts = append(parts, "elapsed="+s.MaxElapsed.String())
	}
	return strings.Join(parts, ",")
}

// ParseSchedule reads a schedule from a comma-separated list, as given on
// the command line. Two forms are accepted:
//
//	1s,x2,max=1h,attempts=15,jitter=0.2,elapsed=24h   exponential
//	1s,10s,1m,10m,1h,jitter=0.1                       explicit waits
//
// In the exponential form the single duration is the initial wait and xN
// the multiplier; in the explicit form the durations are the waits after
// each failed attempt in turn. Keys not given keep the values of
// DefaultSchedule, except that an explicit list allows len(list)+1
// attempts unless attempts= says otherwise. An empty string gives
// DefaultSchedule.
func ParseSchedule(text string) (Schedule, error) {
	s := DefaultSchedule()
	var durs []time.Duration
	attemptsSet := false
	for _, tok := range strings.Split(text, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		if key, val, ok := strings.Cut(tok, "="); ok {
			var err error
			switch strings.ToLower(strings.TrimSpace(key)) {
			case "max":
				s.Max, err = parseDur(val)
			case "attempts":
				s.Attempts, err = strconv.Atoi(strings.TrimSpace(val))
				if err == nil && s.Attempts < 0 {
					err = fmt.Errorf("negative")
				}
				attemptsSet = true
			case "jitter":
				s.Jitter, err = strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err == nil && (s.Jitter < 0 || s.Jitter > 1) {
					err = fmt.Errorf("not in [0, 1]")
				}
			case "elapsed", "maxelapsed":
				s.MaxElapsed, err = parseDur(val)
			default:
				err = fmt.Errorf("unknown key")
			}
			if err != nil {
				return Schedule{}, fmt.Errorf("delivery: schedule %q: %q: %w", text, tok, err)
			}
			continue
		}
		if strings.HasPrefix(tok, "x") || strings.HasPrefix(tok, "*") {
			m, err := strconv.ParseFloat(tok[1:], 64)
			if err != nil || m < 1 {
				return Schedule{}, fmt.Errorf("delivery: schedule %q: multiplier %q must be a number ≥ 1", text, tok)
			}
			s.Multiplier = m
			continue
		}
		d, err := parseDur(tok)
		if err != nil {
			return Schedule{}, fmt.Errorf("delivery: schedule %q: %q: %w", text, tok, err)
		}
		durs = append(durs, d)
	}
	switch len(durs) {
	case 0:
	case 1:
		s.Initial = durs[0]
	default:
		s.Steps = durs
		if !attemptsSet {
			s.Attempts = len(durs) + 1
		}
	}
	if err := s.validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

func parseDur(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", d)
	}
	return d, nil
}

// validate reports a schedule that cannot produce waits.
func (s Schedule) validate() error {
	if s.Steps == nil && s.Initial <= 0 {
		return fmt.Errorf("delivery: schedule %s: initial wait must be positive", s)
	}
	if s.Jitter < 0 || s.Jitter > 1 {
		return fmt.Errorf("delivery: schedule %s: jitter must be in [0, 1]", s)
	}
	return nil
}
