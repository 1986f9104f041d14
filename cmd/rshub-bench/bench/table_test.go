package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// reportOf builds a finished report from rows given their per-run
// values, as Run does.
func reportOf(rows ...Row) *Report {
	rep := &Report{Settings: map[string]string{"runs": "3", "scenarios": "webhook"}, Elapsed: "1m2s"}
	rep.Rows = rows
	rep.finish()
	return rep
}

func TestWriteTable_EveryLineFits120Columns(t *testing.T) {
	long := strings.Repeat("a very long figure name with words ", 6) + strings.Repeat("x", 150)
	var runs []float64
	for k := range 12 {
		runs = append(runs, float64(k)*1e5)
	}
	rep := reportOf(
		Row{Scenario: strings.Repeat("scenario-", 20), Figure: long, Unit: "bytes-per-idle-connection", Better: "higher",
			Target: &Target{Kind: TargetRatioMin, Value: 0.7}, HubRuns: runs, CeilRuns: append(runs[1:], 1e12)},
		Row{Scenario: "webhook", Figure: "p99 at 50% of hub max", Unit: "ms", Better: "lower",
			Target: &Target{Kind: TargetHubMax, Value: 1e300}, HubRuns: []float64{math.MaxFloat64, -1e300, math.Inf(1)}, CeilRuns: []float64{1e-300, math.NaN(), 3}},
		Row{Scenario: "webhook", Figure: "join: duplicates at subscriptions that kept their hub", Unit: "", Better: "info",
			HubRuns: []float64{123456789012, -98765432101}, CeilRuns: []float64{1e-9, 7}},
	)
	rep.Settings["scenarios"] = strings.Repeat("webhook,", 40)
	rep.Notes = []string{strings.Repeat("a note that goes on and on ", 20), strings.Repeat("y", 400)}
	rep.Errors = []string{"webhook run 1: " + strings.Repeat("error detail ", 30)}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(out.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > tableWidth {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, n, line)
		}
	}
	flat := strings.Join(strings.Fields(out.String()), " ")
	if !strings.Contains(flat, "a very long figure name") || !strings.Contains(out.String(), "ERROR: webhook run 1") {
		t.Errorf("the table lost the figure or the error:\n%s", out.String())
	}
}

func TestWrap_KeepsEveryRuneWithinTheWidth(t *testing.T) {
	for _, s := range []string{"", "one", "ratio ≥ 70% → and ≤ 120%", strings.Repeat("word ", 50), strings.Repeat("é", 95) + " a " + strings.Repeat("b", 7)} {
		for _, width := range []int{1, 5, 37, 120} {
			lines := wrap(s, width)
			for _, l := range lines {
				if utf8.RuneCountInString(l) > width {
					t.Errorf("wrap(%q, %d): line %q is wider", s, width, l)
				}
			}
			if strings.ReplaceAll(strings.Join(lines, ""), " ", "") != strings.ReplaceAll(s, " ", "") {
				t.Errorf("wrap(%q, %d) = %q, lost text", s, width, lines)
			}
		}
	}
}

// TestVerdict_ExplainsEveryKind checks each goal kind missed, met, and
// without a goal: a NO names its goal, the figures and the gap.
func TestVerdict_ExplainsEveryKind(t *testing.T) {
	for _, c := range []struct {
		name    string
		row     Row
		verdict string
		why     []string
	}{
		{"ratio short", Row{Figure: "deliveries/s", Unit: "1/s", Target: &Target{Kind: TargetRatioMin, Value: 0.7},
			HubRuns: []float64{13000}, CeilRuns: []float64{20000}}, "NO",
			[]string{"goal is ratio ≥ 70%", "median ratio is 65.0%", "hub 13000 1/s, ceiling 20000 1/s", "5.0 points short"}},
		{"ratio over", Row{Figure: "hub CPU per publish", Unit: "ms", Target: &Target{Kind: TargetRatioMax, Value: 1.2},
			HubRuns: []float64{2.7}, CeilRuns: []float64{2}}, "NO",
			[]string{"goal is ratio ≤ 120%", "median ratio is 135.0%", "15 points over"}},
		{"hub over", Row{Figure: "p99 at 50% of hub max", Unit: "ms", Target: &Target{Kind: TargetHubMax, Value: 25},
			HubRuns: []float64{83}, CeilRuns: []float64{51}}, "NO",
			[]string{"goal is hub ≤ 25 ms", "hub's median is 83.00 ms", "58.00 ms (232%) over"}},
		{"just short", Row{Figure: "deliveries/s", Unit: "1/s", Target: &Target{Kind: TargetRatioMin, Value: 0.7},
			HubRuns: []float64{9710}, CeilRuns: []float64{13927}}, "NO",
			[]string{"median ratio is 69.7%", "0.3 points short"}},
		{"no ratio", Row{Figure: "deliveries/s", Unit: "1/s", Target: &Target{Kind: TargetRatioMin, Value: 0.7},
			HubRuns: []float64{13000}, CeilRuns: []float64{math.NaN()}}, "NO",
			[]string{"goal is ratio ≥ 70%", "no ratio"}},
		{"met", Row{Figure: "deliveries/s", Unit: "1/s", Target: &Target{Kind: TargetRatioMin, Value: 0.7},
			HubRuns: []float64{19000}, CeilRuns: []float64{20000}}, "yes", nil},
		{"no goal", Row{Figure: "p50", Unit: "ms", HubRuns: []float64{1}, CeilRuns: []float64{2}}, "", nil},
	} {
		rep := reportOf(c.row)
		v, why := rep.Rows[0].verdict()
		if v != c.verdict || (len(c.why) == 0) != (why == "") {
			t.Errorf("%s: verdict %q %q, want %q", c.name, v, why, c.verdict)
		}
		for _, w := range c.why {
			if !strings.Contains(why, w) {
				t.Errorf("%s: %q lacks %q", c.name, why, w)
			}
		}
		var out bytes.Buffer
		if err := rep.WriteTable(&out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "verdict: yes = the medians meet") {
			t.Errorf("%s: the table has no legend of the verdicts:\n%s", c.name, out.String())
		}
		if why != "" && !strings.Contains(strings.Join(strings.Fields(out.String()), " "), why) {
			t.Errorf("%s: the table does not print %q:\n%s", c.name, why, out.String())
		}
	}
}
