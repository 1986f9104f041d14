package bench

import (
	"fmt"
	"io"
	"time"
)

// progress tells a person waiting for a run what it will do, how long it
// should take, and where it is: the plan before the first scenario,
// "scenario k of n" as each starts, elapsed and remaining as each ends.
type progress struct {
	w     io.Writer
	plan  []Estimate
	start time.Time
	now   func() time.Time
}

func newProgress(w io.Writer, plan []Estimate, now func() time.Time) *progress {
	return &progress{w: w, plan: plan, start: now(), now: now}
}

// begin prints the scenarios to run and the total estimate.
func (p *progress) begin(runs int) {
	fmt.Fprintf(p.w, "rshub-bench: %d scenario(s), %d run(s) each, about %s in all (estimated from the settings; a busy machine takes longer):\n",
		len(p.plan), runs, about(PlanTotal(p.plan)))
	for k, e := range p.plan {
		fmt.Fprintf(p.w, "  %d. %-13s about %s\n", k+1, e.Scenario, about(e.Total()))
	}
}

// started prints that scenario k (from 0) starts.
func (p *progress) started(k int) {
	e := p.plan[k]
	fmt.Fprintf(p.w, "scenario %d of %d: %s (about %s)\n", k+1, len(p.plan), e.Scenario, about(e.Total()))
}

// ended prints that scenario k ended after taking took, with failures
// (the report's errors of it), the time elapsed and the estimate of the
// scenarios left.
func (p *progress) ended(k int, took time.Duration, failures int) {
	var left time.Duration
	for _, e := range p.plan[k+1:] {
		left += e.Total()
	}
	outcome := "done in " + about(took)
	if failures > 0 {
		outcome = fmt.Sprintf("ended in %s with %d error(s) (see ERROR below the table)", about(took), failures)
	}
	rest := "nothing left"
	if left > 0 {
		rest = "about " + about(left) + " left"
	}
	fmt.Fprintf(p.w, "scenario %d of %d: %s %s; elapsed %s, %s\n", k+1, len(p.plan), p.plan[k].Scenario, outcome,
		about(p.now().Sub(p.start)), rest)
}
