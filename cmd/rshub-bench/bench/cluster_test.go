package bench

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// logOf returns a receipt log holding, per subscription, the given ids in
// arrival order, one millisecond apart.
func logOf(got [][]int32) *clusterLog {
	l := &clusterLog{epoch: time.Now()}
	l.reset(len(got))
	rs := *l.got.Load()
	for i, ids := range got {
		for k, id := range ids {
			rs[i] = append(rs[i], clusterReceipt{id: id, at: int64(k) * int64(time.Millisecond)})
		}
	}
	return l
}

func TestCheckDelivery_CountsMissingReorderedAndStrayReceipts(t *testing.T) {
	// Two channels: ids 0, 2, 4 on channel 0 and 1, 3 on channel 1; 4
	// was never acknowledged. Subscriptions 0 and 2 are on channel 0.
	pubs := []clusterPub{{0, true}, {1, true}, {0, true}, {1, true}, {0, false}}
	from0 := func(int) int32 { return 0 }
	for _, tc := range []struct {
		name string
		got  [][]int32
		want clusterCheck
	}{
		{"everything in order, repeats and the unacknowledged one allowed",
			[][]int32{{0, 2, 2, 4}, {1, 3}, {0, 0, 2}}, clusterCheck{Subs: 3, Complete: 3}},
		{"a lost notification", [][]int32{{0}, {1, 3}, {0, 2}}, clusterCheck{Subs: 3, Complete: 2, Missing: 1}},
		{"a reordered pair", [][]int32{{2, 0}, {1, 3}, {0, 2}}, clusterCheck{Subs: 3, Complete: 2, Unordered: 1}},
		{"another channel's notification", [][]int32{{0, 1, 2}, {1, 3}, {0, 2}}, clusterCheck{Subs: 3, Complete: 3, Stray: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkDelivery(logOf(tc.got), pubs, 2, len(tc.got), from0)
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (got.err() == nil) != (tc.want.Missing == 0 && tc.want.Unordered == 0 && tc.want.Stray == 0) {
				t.Errorf("err() = %v for %+v", got.err(), got)
			}
		})
	}
	// A subscription created later owes nothing published before it.
	late := func(i int) int32 {
		if i == 0 {
			return 2
		}
		return 0
	}
	if got := checkDelivery(logOf([][]int32{{2}, {1, 3}}), pubs, 2, 2, late); got.Missing != 0 {
		t.Errorf("a late subscription is owed notifications from before it: %+v", got)
	}
}

func TestCountPhase_CountsRepeatsInTheWindowAsDuplicates(t *testing.T) {
	l := logOf([][]int32{{0, 0, 1, 1, 1}, {0, 1}}) // arrivals at 0, 1, 2, 3, 4 ms
	got := countPhase(l, 2, time.Millisecond, 4*time.Millisecond, func(i int) bool { return i == 0 })
	// window [1ms, 4ms): subscription 0's 0 (repeat), 1, 1 (repeat); subscription 1's 1
	if want := (phaseCounts{Receipts: 4, Dups: 2, MovedDups: 2}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParseFlags_ClusterRunsOnlyWhenNamed(t *testing.T) {
	cfg, _, err := ParseFlags(nil, io.Discard)
	if err != nil || slices.Contains(cfg.Scenarios, ScenarioCluster) {
		t.Fatalf("defaults %v (err %v) include the cluster scenario", cfg.Scenarios, err)
	}
	cfg, _, err = ParseFlags([]string{"--quick", "--scenarios", "cluster", "--cluster-claim-ttl", "7s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClusterClaimTTL != 7*time.Second || cfg.ClusterSubscriptions != Quick(Defaults()).ClusterSubscriptions {
		t.Errorf("claim TTL %v subscriptions %d; want 7s and quick's", cfg.ClusterClaimTTL, cfg.ClusterSubscriptions)
	}
	for _, args := range [][]string{
		{"--scenarios", "cluster", "--cluster-channels", "0"},
		{"--scenarios", "cluster", "--cluster-subscriptions", "5", "--cluster-channels", "10"},
		{"--scenarios", "cluster", "--cluster-claim-ttl", "10ms"},
	} {
		if _, _, err := ParseFlags(args, io.Discard); err == nil {
			t.Errorf("ParseFlags(%q) accepted", args)
		}
	}
}

// TestRun_ClusterQuickDeliversEverythingInOrder runs the cluster scenario
// once at --quick sizes: real nats-server, redis-server and hub processes.
func TestRun_ClusterQuickDeliversEverythingInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a NATS cluster, Redis and four hubs")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
			t.Skip("redis-server is not installed")
		}
	}
	t.Parallel() // mostly waits on its processes, as the quick scenarios do
	cfg := Quick(Defaults())
	cfg.Scenarios = []string{ScenarioCluster}
	// smaller than --quick: each idle window and the takeover's wait are a
	// claim TTL or a window long, and 500 subscriptions over 10 channels
	// still put every hub's shards through the kill and the join
	cfg.ClusterSubscriptions, cfg.ClusterClaimTTL, cfg.ClusterIdle = 500, 3*time.Second, time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	lg := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		lg = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	rep, err := Run(ctx, cfg, lg, io.Discard)
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
	order, ok := figures["delivered in order (subscriptions)"]
	if !ok || order.Met == nil || !*order.Met {
		t.Errorf("not every subscription got every acknowledged notification in order: %+v", order)
	}
	for _, name := range []string{"idle Redis commands/s", "takeover: hub 1's subscriptions resumed", "join: duplicate deliveries"} {
		if row, ok := figures[name]; !ok || math.IsNaN(row.Hub) {
			t.Errorf("figure %q missing: %+v", name, row)
		}
	}
	if row := figures["takeover: subscriptions hub 1 delivered"]; !(row.Hub > 0) {
		t.Errorf("the killed hub delivered no subscription before the kill: %+v", row)
	}
}

func TestNextPage_FollowsRelNextOnly(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/admin/deliveries?limit=1000")
	for _, tc := range []struct{ link, want string }{
		{"", ""},
		{`</admin/deliveries?limit=1000&cursor=ZDA6eA>; rel="next"`, "http://127.0.0.1:8080/admin/deliveries?limit=1000&cursor=ZDA6eA"},
		{`<http://127.0.0.1:8080/x>; rel="prev", </y?cursor=1>; rel="next"`, "http://127.0.0.1:8080/y?cursor=1"},
		{`</z>; rel="prev"`, ""},
	} {
		got, err := nextPage(base, tc.link)
		if err != nil || got != tc.want {
			t.Errorf("nextPage(%q) = %q, %v; want %q", tc.link, got, err, tc.want)
		}
	}
}

// The bench is a module of its own that replaces rshub with ../..: the
// cluster scenario finds rshub's source (to build cmd/hub) from inside it, and
// refuses a directory outside any rshub checkout.
func TestRshubRoot_FindsTheReplacedModuleFromTheBenchModule(t *testing.T) {
	root, err := rshubRoot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "hub")); err != nil {
		t.Fatalf("root %q holds no cmd/hub: %v", root, err)
	}
	if _, err := rshubRoot(context.Background(), t.TempDir()); err == nil {
		t.Fatal("a directory outside any module was taken for rshub's source")
	}
}
