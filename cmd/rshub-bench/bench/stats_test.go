package bench

import (
	"math"
	"testing"
	"time"
)

func TestPercentile_NearestRank(t *testing.T) {
	ds := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x)
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100 - i) // 100..1, unsorted
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty is zero", nil, 50, 0},
		{"single sample is every percentile", ds(7), 99, 7},
		{"p50 of odd count is the middle", ds(3, 1, 2), 50, 2},
		{"p50 of even count is the lower middle", ds(4, 1, 3, 2), 50, 2},
		{"p99 of 100 is the 99th", hundred, 99, 99},
		{"p100 is the maximum", ds(5, 9, 1), 100, 9},
		{"tiny p is the minimum", ds(5, 9, 1), 0.1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.samples, tt.p); got != tt.want {
				t.Errorf("Percentile(p=%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestMedian_IgnoresNaNAndAveragesMiddlePair(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   float64
	}{
		{"odd", []float64{3, 1, 2}, 2},
		{"even averages the middle pair", []float64{4, 1, 3, 2}, 2.5},
		{"NaN ignored", []float64{math.NaN(), 5, 1, 3}, 3},
		{"single", []float64{42}, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.values...)
			if got := Median(tt.values); got != tt.want {
				t.Errorf("Median(%v) = %v, want %v", tt.values, got, tt.want)
			}
			for i := range in {
				if !(in[i] == tt.values[i] || math.IsNaN(in[i]) && math.IsNaN(tt.values[i])) {
					t.Fatalf("Median changed its input")
				}
			}
		})
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Median([]float64{math.NaN()})) {
		t.Error("Median of nothing must be NaN")
	}
}

func TestRatio_MissingOrZeroCeilingIsNaN(t *testing.T) {
	if got := Ratio(70, 100); got != 0.7 {
		t.Errorf("Ratio(70,100) = %v, want 0.7", got)
	}
	for _, c := range [][2]float64{{1, 0}, {1, -1}, {math.NaN(), 1}, {1, math.NaN()}} {
		if got := Ratio(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("Ratio(%v,%v) = %v, want NaN", c[0], c[1], got)
		}
	}
}

func TestRate_PerSecond(t *testing.T) {
	if got := Rate(500, 250*time.Millisecond); got != 2000 {
		t.Errorf("Rate = %v, want 2000", got)
	}
	if !math.IsNaN(Rate(1, 0)) {
		t.Error("Rate over no time must be NaN")
	}
}

func TestSummarize_CountP50P99Max(t *testing.T) {
	s := make([]time.Duration, 1000)
	for i := range s {
		s[i] = time.Duration(1000-i) * time.Millisecond
	}
	got := Summarize(s)
	want := Latencies{Count: 1000, P50: 500 * time.Millisecond, P99: 990 * time.Millisecond, Max: time.Second}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
	if (Summarize(nil) != Latencies{}) {
		t.Error("Summarize(nil) must be zero")
	}
}

func TestParseMark_RoundTripsIDAndSendTime(t *testing.T) {
	sent := time.Unix(1700000000, 123456789)
	body := notification(42, sent, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	id, got, ok := parseMark(body)
	if !ok || id != 42 || !got.Equal(sent) {
		t.Fatalf("parseMark = %d, %v, %v; want 42, %v, true", id, got, ok, sent)
	}
	if _, _, ok := parseMark([]byte(`{"type":"live","seq":3}`)); ok {
		t.Error("a frame without a mark must not parse")
	}
}
