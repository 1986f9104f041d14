package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Verdicts of a row with a goal.
const (
	verdictMet    = "yes"
	verdictMissed = "NO"
)

// verdictLegend says what each verdict means; the table prints it.
const verdictLegend = "verdict: yes = the medians meet the figure's goal; NO = they miss it (the line under it names the " +
	"goal and by how much); blank = the figure has no goal (it is there to read, not to pass)."

// goal renders t with the figure's unit: "ratio ≥ 70%" or "hub ≤ 25 ms".
func (t *Target) goal(unit string) string {
	if t == nil {
		return ""
	}
	switch t.Kind {
	case TargetRatioMin:
		return "ratio ≥ " + pct(t.Value)
	case TargetRatioMax:
		return "ratio ≤ " + pct(t.Value)
	}
	v := strconv.FormatFloat(t.Value, 'f', -1, 64)
	if math.Abs(t.Value) >= 1e9 {
		v = num(t.Value)
	}
	return strings.TrimSpace("hub ≤ " + v + " " + unit)
}

// verdict returns row's verdict ("" without a goal or a hub figure) and,
// for a NO, a sentence naming the goal missed and by how much.
func (row Row) verdict() (verdict, why string) {
	if row.Met == nil || row.Target == nil {
		return "", ""
	}
	if *row.Met {
		return verdictMet, ""
	}
	t, unit := row.Target, ""
	if row.Unit != "" {
		unit = " " + row.Unit
	}
	goal := "NO: the goal is " + t.goal(row.Unit)
	switch t.Kind {
	case TargetRatioMin, TargetRatioMax:
		if math.IsNaN(row.Ratio) {
			return verdictMissed, goal + "; there is no ratio (the ceiling figure is missing or not positive)"
		}
		gap, dir := 100*(t.Value-row.Ratio), "short"
		if t.Kind == TargetRatioMax {
			gap, dir = -gap, "over"
		}
		return verdictMissed, fmt.Sprintf("%s; the median ratio is %s%% (hub %s%s, ceiling %s%s): %s points %s",
			goal, strconv.FormatFloat(100*row.Ratio, 'f', 1, 64), num(row.Hub), unit, num(row.Ceiling), unit, points(gap), dir)
	}
	over := row.Hub - t.Value
	rel := ""
	if t.Value > 0 {
		rel = " (" + pct(over/t.Value) + ")"
	}
	return verdictMissed, fmt.Sprintf("%s; the hub's median is %s%s: %s%s%s over", goal, num(row.Hub), unit, num(over), unit, rel)
}

// points formats percentage points with a decimal when they are few, so
// that a ratio just below its goal does not read as 0 points short.
func points(p float64) string {
	if math.Abs(p) < 10 {
		return strconv.FormatFloat(p, 'f', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 0, 64)
}
