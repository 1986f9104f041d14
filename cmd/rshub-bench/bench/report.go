package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// Target kinds.
const (
	TargetRatioMin = "ratio>=" // the median ratio hub/ceiling must be at least Value
	TargetHubMax   = "hub<="   // the median hub figure must be at most Value (in the figure's unit)
	TargetRatioMax = "ratio<=" // the median ratio hub/ceiling must be at most Value
)

// Target is a figure's goal.
type Target struct {
	Kind  string  `json:"kind"`
	Value float64 `json:"value"`
}

// met reports whether hub and ratio meet t.
func (t *Target) met(hub, ratio float64) bool {
	switch t.Kind {
	case TargetRatioMin:
		return ratio >= t.Value
	case TargetRatioMax:
		return ratio <= t.Value
	}
	return hub <= t.Value
}

// sample is one figure of one run: the hub's value and the ceiling's,
// measured back to back.
type sample struct {
	Name    string
	Unit    string
	Better  string // higher, lower or info
	Target  *Target
	Hub     float64
	Ceiling float64
}

// Row is one figure of the report, over every run.
type Row struct {
	Scenario string    `json:"scenario"`
	Figure   string    `json:"figure"`
	Unit     string    `json:"unit"`
	Better   string    `json:"better"`      // which way is better: higher, lower, or info
	Hub      float64   `json:"hub"`         // median of HubRuns
	Ceiling  float64   `json:"ceiling"`     // median of CeilingRuns
	Ratio    float64   `json:"ratio"`       // median of the per-run ratios hub/ceiling
	HubRuns  []float64 `json:"hubRuns"`     // the hub's value in each run
	CeilRuns []float64 `json:"ceilingRuns"` // the ceiling's value in each run
	Target   *Target   `json:"target,omitempty"`
	Met      *bool     `json:"met,omitempty"` // whether the medians meet Target
}

// Report is the outcome of a whole benchmark invocation.
type Report struct {
	Started  time.Time         `json:"started"`
	Elapsed  string            `json:"elapsed"`
	Settings map[string]string `json:"settings"`
	Rows     []Row             `json:"rows"`
	Notes    []string          `json:"notes,omitempty"`
	Errors   []string          `json:"errors,omitempty"`
}

// add merges one run's samples of scenario into the report's rows.
func (r *Report) add(scenario string, run []sample) {
	for _, s := range run {
		i := r.row(scenario, s)
		r.Rows[i].HubRuns = append(r.Rows[i].HubRuns, s.Hub)
		r.Rows[i].CeilRuns = append(r.Rows[i].CeilRuns, s.Ceiling)
	}
}

func (r *Report) row(scenario string, s sample) int {
	for i, row := range r.Rows {
		if row.Scenario == scenario && row.Figure == s.Name {
			return i
		}
	}
	r.Rows = append(r.Rows, Row{Scenario: scenario, Figure: s.Name, Unit: s.Unit, Better: s.Better, Target: s.Target})
	return len(r.Rows) - 1
}

// finish computes medians, ratios and target verdicts.
func (r *Report) finish() {
	for i := range r.Rows {
		row := &r.Rows[i]
		row.Hub, row.Ceiling = Median(row.HubRuns), Median(row.CeilRuns)
		ratios := make([]float64, len(row.HubRuns))
		for k := range row.HubRuns {
			ratios[k] = Ratio(row.HubRuns[k], row.CeilRuns[k])
		}
		row.Ratio = Median(ratios)
		if row.Target != nil && !math.IsNaN(row.Hub) {
			met := row.Target.met(row.Hub, row.Ratio)
			row.Met = &met
		}
	}
}

// WriteJSON prints r as indented JSON; a missing figure (NaN) becomes -1.
func (r *Report) WriteJSON(w io.Writer) error {
	out := *r
	out.Rows = make([]Row, len(r.Rows))
	for i, row := range r.Rows {
		row.HubRuns, row.CeilRuns = cleanAll(row.HubRuns), cleanAll(row.CeilRuns)
		row.Hub, row.Ceiling, row.Ratio = clean(row.Hub), clean(row.Ceiling), clean(row.Ratio)
		out.Rows[i] = row
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}

// clean replaces NaN and infinities, which JSON cannot carry, with -1.
func clean(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return -1
	}
	return x
}

func cleanAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = clean(x)
	}
	return out
}
