package bench

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRun_SubscribeMemoryVerifiesEverySubscriptionAndReadsRSS runs the
// subscribe-memory scenario at a small size with the test binary as the
// hub child, with --mem-restart: every subscription must be verified and
// delivering, and after each restart receive its channel's notification
// (the scenario fails otherwise), and the figures present. Their size is
// not checked (the machine is shared).
func TestRun_SubscribeMemoryVerifiesEverySubscriptionAndReadsRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a hub child process")
	}
	cfg := Quick(Defaults())
	cfg.Scenarios = []string{ScenarioSubscribeMemory}
	cfg.MemSubscriptions, cfg.MemChannels, cfg.MemWait = 300, 30, 200*time.Millisecond
	cfg.MemRestart = true
	cfg.HubCommand = []string{os.Args[0], "-test.run=^$"}
	cfg.HubEnv = []string{hubEnv}
	cfg.HubHeapProfile = t.TempDir() + "/heap"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("scenario errors:\n%s", strings.Join(rep.Errors, "\n"))
	}
	figures := map[string]Row{}
	for _, row := range rep.Rows {
		figures[row.Figure] = row
	}
	perSub, ok := figures["RSS per subscription 200ms after verification"]
	if !ok || math.IsNaN(perSub.Hub) || perSub.Target == nil || perSub.Target.Value != 4096 {
		t.Errorf("RSS per subscription: %+v, want a value with the 4 KiB goal; rows %v", perSub, rep.Rows)
	}
	if rate := figures["subscriptions verified per second"]; !(rate.Hub > 0) {
		t.Errorf("verified per second %v, want positive", rate.Hub)
	}
	for _, how := range []string{"a clean stop", "kill -9"} {
		active := figures["after "+how+": start → every queue active (hub's gauge)"]
		swept := figures["after "+how+": start → every subscriber received the sweep"]
		if !(active.Hub > 0) || !(swept.Hub >= active.Hub) || active.Target == nil || active.Target.Value != 60 {
			t.Errorf("restart after %s: every queue active %+v, every receipt %+v; want positive, in that order, the first with the 60 s goal", how, active, swept)
		}
	}
	for _, when := range []string{"before", "after", "restart-stop", "restart-kill"} {
		if _, err := os.Stat(cfg.HubHeapProfile + ".submem.1." + when); err != nil {
			t.Errorf("no heap profile %s the subscriptions: %v", when, err)
		}
	}
}
