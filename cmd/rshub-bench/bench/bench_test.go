package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// fleetEnv makes the test binary act as the WebSocket client fleet child,
// hubEnv as a hub child.
const (
	fleetEnv = "RSHUB_BENCH_TEST_FLEET=1"
	hubEnv   = "RSHUB_BENCH_TEST_HUB=1"
)

func TestMain(m *testing.M) {
	if os.Getenv("RSHUB_BENCH_TEST_FLEET") == "1" {
		lg := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if err := RunFleet(context.Background(), os.Stdin, os.Stdout, lg); err != nil {
			lg.Error("fleet", "err", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("RSHUB_BENCH_TEST_HUB") == "1" {
		lg := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		if err := RunHubChild(context.Background(), os.Stdin, os.Stdout, lg); err != nil {
			lg.Error("hub child", "err", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRun_QuickScenariosDeliverEverything runs every scenario once at
// --quick sizes. A measurement only yields figures when every receiver got
// every notification, so the check is that each figure is present; timing
// thresholds are not checked (the machine is shared).
func TestRun_QuickScenariosDeliverEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hubs and a child process")
	}
	t.Parallel() // mostly waits on loopback I/O, as the cluster test does
	cfg := Quick(Defaults())
	cfg.FleetCommand = []string{os.Args[0], "-test.run=^$"}
	cfg.FleetEnv = []string{fleetEnv}
	cfg.HubCommand = []string{os.Args[0], "-test.run=^$"}
	cfg.HubEnv = []string{hubEnv}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		lg = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var prog bytes.Buffer
	rep, err := Run(ctx, cfg, lg, &prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("scenario errors:\n%s", strings.Join(rep.Errors, "\n"))
	}
	if last := fmt.Sprintf("scenario %d of %d: %s done in", len(cfg.Scenarios), len(cfg.Scenarios), cfg.Scenarios[len(cfg.Scenarios)-1]); !strings.Contains(prog.String(), last) {
		t.Errorf("progress lacks %q:\n%s", last, prog.String())
	}
	for _, scen := range AllScenarios() {
		n := 0
		for _, row := range rep.Rows {
			if row.Scenario != scen {
				continue
			}
			n++
			// An info figure may have no ceiling (a hub-only count).
			if len(row.HubRuns) != cfg.Runs || math.IsNaN(row.Hub) || (math.IsNaN(row.Ceiling) && row.Better != "info") {
				t.Errorf("%s %s: hub %v ceiling %v over %d runs, want a value for each of %d runs", scen, row.Figure, row.Hub, row.Ceiling, len(row.HubRuns), cfg.Runs)
			}
			if row.Unit == "1/s" && !(row.Hub > 0 && (row.Ceiling > 0 || math.IsNaN(row.Ceiling) && row.Better == "info")) {
				t.Errorf("%s %s: hub %v ceiling %v, want positive rates", scen, row.Figure, row.Hub, row.Ceiling)
			}
		}
		if n == 0 {
			t.Errorf("no figures for scenario %s", scen)
		}
	}
	var table, js bytes.Buffer
	if err := WriteReport(&table, rep, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(&js, rep, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "hub/ceiling") || !strings.Contains(js.String(), `"ratio"`) {
		t.Errorf("report lacks its columns:\n%s\n%s", table.String(), js.String())
	}
	t.Logf("\n%s", table.String())
}

func TestParseFlags_QuickKeepsExplicitSizes(t *testing.T) {
	cfg, fleet, err := ParseFlags([]string{"--quick", "--clients", "300", "--scenarios", "nats, webhook"}, io.Discard)
	if err != nil || fleet {
		t.Fatalf("ParseFlags: %v, fleet %v", err, fleet)
	}
	if cfg.Clients != 300 || cfg.Subscribers != Quick(Defaults()).Subscribers || cfg.Runs != 1 {
		t.Errorf("got clients %d subscribers %d runs %d; want 300, quick's subscribers, 1 run", cfg.Clients, cfg.Subscribers, cfg.Runs)
	}
	if strings.Join(cfg.Scenarios, ",") != "nats,webhook" {
		t.Errorf("scenarios %v", cfg.Scenarios)
	}
}

func TestParseFlags_HelpDocumentsEveryFlagButTheHiddenOne(t *testing.T) {
	var out bytes.Buffer
	_, _, err := ParseFlags([]string{"--help"}, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, name := range []string{"scenarios", "subscribers", "clients", "notifications", "runs", "json", "duration-cap", "quick"} {
		if !strings.Contains(out.String(), "--"+name+"\n") {
			t.Errorf("--help does not document --%s", name)
		}
	}
	help := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		"a run with no flags (" + strings.Join(AllScenarios(), ", ") + "; 3 runs each) takes about " + about(PlanTotal(Plan(Defaults()))),
		"--quick about " + about(PlanTotal(Plan(Quick(Defaults())))),
		"a smoke test of about " + about(PlanTotal(Plan(Quick(Defaults())))),
	} {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not say %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), FleetFlag) {
		t.Errorf("--help shows the hidden --%s", FleetFlag)
	}
}

func TestParseFlags_RefusesBadSettings(t *testing.T) {
	for _, args := range [][]string{
		{"--scenarios", "webhook,smtp"},
		{"--runs", "0"},
		{"--notifications", "1"},
		{"--duration-cap", "10ms"},
		{"--mem-restart", "--mem-subscriptions", "1001", "--mem-channels", "100"},
		{"extra"},
	} {
		if _, _, err := ParseFlags(args, io.Discard); err == nil {
			t.Errorf("ParseFlags(%q) accepted", args)
		}
	}
}
