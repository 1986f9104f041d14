package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// planOf parses args and returns the plan of the configuration.
func planOf(t *testing.T, args ...string) []Estimate {
	t.Helper()
	cfg, _, err := ParseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("ParseFlags(%q): %v", args, err)
	}
	return Plan(cfg)
}

func TestPlan_EveryScenarioHasAnEstimateAndTheTotalIsTheirSum(t *testing.T) {
	for _, args := range [][]string{nil, {"--quick"}} {
		args = append(args, "--scenarios", strings.Join(append(AllScenarios(), OptInScenarios()...), ","))
		plan := planOf(t, args...)
		var sum time.Duration
		for _, e := range plan {
			if e.Setup <= 0 || e.PerRun <= 0 {
				t.Errorf("%q: %s setup %v per run %v, want both positive", args, e.Scenario, e.Setup, e.PerRun)
			}
			if e.Total() != e.Setup+time.Duration(e.Runs)*e.PerRun {
				t.Errorf("%s: total %v is not setup %v + %d × %v", e.Scenario, e.Total(), e.Setup, e.Runs, e.PerRun)
			}
			sum += e.Total()
		}
		if got := PlanTotal(plan); got != sum || len(plan) != len(AllScenarios())+len(OptInScenarios()) {
			t.Errorf("%q: total %v over %d scenarios, want the sum %v", args, got, len(plan), sum)
		}
	}
}

// TestPlan_FollowsTheDurationFlags checks that each configured duration
// enters the estimate as the run spends it: the windows in full, the
// waits bounded by --duration-cap, everything once per run.
func TestPlan_FollowsTheDurationFlags(t *testing.T) {
	total := func(args ...string) time.Duration { return PlanTotal(planOf(t, args...)) }
	cluster := []string{"--scenarios", "cluster", "--runs", "2"}
	// Two idle windows per run.
	if d := total(append(cluster, "--cluster-idle", "25s")...) - total(append(cluster, "--cluster-idle", "10s")...); d != 2*2*15*time.Second {
		t.Errorf("--cluster-idle 10s → 25s over 2 runs moved the estimate by %v, want 1m0s", d)
	}
	if total(append(cluster, "--cluster-claim-ttl", "30s")...) <= total(cluster...) {
		t.Error("a longer --cluster-claim-ttl did not lengthen the estimate")
	}
	// Three fixed-rate measurements per run of 500 notifications: 10 s
	// each at 50/s, 20 s at 25/s.
	scale := []string{"--scenarios", "scale", "--runs", "1"}
	if d := total(append(scale, "--scale-rate", "25")...) - total(append(scale, "--scale-rate", "50")...); d != 3*10*time.Second {
		t.Errorf("--scale-rate 50 → 25 moved the estimate by %v, want 30s", d)
	}
	// webhook-wide's deliveries take longer than a short cap: the hub's
	// and every sender's of the sweep (8, 16, 32, 64, 256: 5 senders, the
	// hub's 256 among them) at the cap, two at half of it.
	wide := []string{"--scenarios", "webhook-wide", "--runs", "1"}
	for _, c := range []time.Duration{5 * time.Second, 10 * time.Second} {
		e := planOf(t, append(wide, "--duration-cap", c.String())...)[0]
		if e.PerRun != 7*c {
			t.Errorf("webhook-wide with --duration-cap %v: %v per run, want %v", c, e.PerRun, 7*c)
		}
		// a sweep of one sender: the hub's concurrency, 256 again
		e = planOf(t, append(wide, "--duration-cap", c.String(), "--ceiling-workers", "256")...)[0]
		if e.PerRun != 3*c {
			t.Errorf("webhook-wide with --duration-cap %v and one sender: %v per run, want %v", c, e.PerRun, 3*c)
		}
	}
	if total("--runs", "3") != 3*total("--runs", "1")-2*setups(planOf(t, "--runs", "1")) {
		t.Error("--runs 3 is not the setups plus three times the runs of --runs 1")
	}
	if q, d := total("--quick"), total(); q >= d/10 {
		t.Errorf("--quick estimated at %v beside %v for the default run", q, d)
	}
}

func setups(plan []Estimate) (sum time.Duration) {
	for _, e := range plan {
		sum += e.Setup
	}
	return sum
}

func TestAbout_RoundsForAPerson(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                  "1s",
		1400 * time.Millisecond:            "1s",
		42 * time.Second:                   "42s",
		2*time.Minute + 34*time.Second:     "2m30s",
		3 * time.Minute:                    "3m",
		18*time.Minute + 29*time.Second:    "18m",
		2*time.Hour + 5*time.Minute + 31e9: "126m",
	} {
		if got := about(d); got != want {
			t.Errorf("about(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestProgress_SaysWhereTheRunIs checks the plan, "scenario k of n" and
// elapsed/remaining lines on a fake clock.
func TestProgress_SaysWhereTheRunIs(t *testing.T) {
	plan := []Estimate{
		{Scenario: "webhook", Setup: 5 * time.Second, PerRun: 10 * time.Second, Runs: 2},
		{Scenario: "nats", Setup: 2 * time.Second, PerRun: 4 * time.Second, Runs: 2},
		{Scenario: "catchup", Setup: 2 * time.Second, PerRun: 70 * time.Second, Runs: 2},
	}
	var out bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(&out, plan, func() time.Time { return now })
	p.begin(2)
	p.started(1)
	now = now.Add(40 * time.Second)
	p.ended(1, 12*time.Second, 0)
	p.started(2)
	now = now.Add(2 * time.Minute)
	p.ended(2, 2*time.Minute, 1)
	for _, want := range []string{
		"3 scenario(s), 2 run(s) each, about 3m in all",
		"1. webhook       about 25s",
		"3. catchup       about 2m20s",
		"scenario 2 of 3: nats (about 10s)",
		"scenario 2 of 3: nats done in 12s; elapsed 40s, about 2m20s left",
		"scenario 3 of 3: catchup ended in 2m with 1 error(s)",
		"elapsed 2m40s, nothing left",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, out.String())
		}
	}
}
