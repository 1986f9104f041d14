package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of samples by the
// nearest-rank method: the smallest sample with at least p % of the samples
// at or below it. It returns 0 for no samples. samples is sorted in place.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	rank := int(math.Ceil(p / 100 * float64(len(samples))))
	rank = min(max(rank, 1), len(samples))
	return samples[rank-1]
}

// Median returns the median of values, the mean of the middle two for an
// even count, ignoring NaNs; NaN when none is left. values is not changed.
func Median(values []float64) float64 {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	mid := len(v) / 2
	if len(v)%2 == 1 {
		return v[mid]
	}
	return (v[mid-1] + v[mid]) / 2
}

// Ratio returns hub/ceiling, or NaN when either is missing (NaN) or the
// ceiling is not positive.
func Ratio(hub, ceiling float64) float64 {
	if math.IsNaN(hub) || math.IsNaN(ceiling) || ceiling <= 0 {
		return math.NaN()
	}
	return hub / ceiling
}

// Rate returns count events per second over d, or NaN when d is not
// positive.
func Rate(count int, d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return float64(count) / d.Seconds()
}

// ms converts a duration to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Latencies summarises publish→receipt samples.
type Latencies struct {
	Count int
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
}

// Summarize returns the count, p50, p99 and maximum of samples, sorting
// samples in place.
func Summarize(samples []time.Duration) Latencies {
	if len(samples) == 0 {
		return Latencies{}
	}
	l := Latencies{Count: len(samples), P50: Percentile(samples, 50), P99: Percentile(samples, 99)}
	l.Max = samples[len(samples)-1]
	return l
}
