package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/docstest"
	"github.com/rshub/rshub/server"
)

func noEnv(string) (string, bool) { return "", false }

func TestHelp_DocumentsEverySettingWithDefaultAndEnv(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, noEnv, &out, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"--listen", "RSHUB_LISTEN", "(default 127.0.0.1:8080)", "--nats-url", "--redis-url", "--sync", "--admin-token", "--allow-networks", "--retry", "--lease-max", "(default 2678400)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestSettings_BadValuesFailFast(t *testing.T) {
	cases := map[string][]string{
		"log format":     {"--log-format", "xml"},
		"max body":       {"--max-body", "0"},
		"unknown flag":   {"--frobnicate"},
		"stray argument": {"extra"},
		"signature":      {"--signature", "md5"},
		"retry schedule": {"--retry", "0s,x2", "--listen", "127.0.0.1:0", "--data-dir", ""},
		"sync":           {"--sync", "sometimes", "--data-dir", "", "--listen", "127.0.0.1:0"},
		"lease policy":   {"--lease-min", "900", "--lease-default", "600", "--listen", "127.0.0.1:0", "--data-dir", ""},
		"per-host floor": {"--per-host", "4", "--per-host-min", "8"},
		"per-host ceil":  {"--per-host", "16", "--per-host-max", "8"},
		"per-host range": {"--per-host-min", "-1"},
		"rate range":     {"--max-rate", "-1"},
		"per-host rate":  {"--per-host-rate", "0.001"},
		"default > max":  {"--default-rate", "10", "--max-rate", "5"},
		"gc pacing":      {"--gc", "sometimes"},
		"breaker":        {"--breaker-failures", "-2"},
		"breaker cool":   {"--breaker-callback-cooldown", "48h"},
		"gc idle":        {"--gc-idle", "3m"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if name == "sync" || name == "lease policy" || name == "retry schedule" {
				args = append(args[:len(args)-1], t.TempDir())
			}
			err := run(ctx, append(args, "--nats-listen", "off"), noEnv, io.Discard, func(server.Started) { t.Error("hub started despite a bad setting") })
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestRun_ServesHealthAndReadinessThenStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, done := startHub(t, ctx, []string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--nats-listen", "off", "--demo"}, "hub")
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + st.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	resp, err := http.Head("http://" + st.Addr + "/topics/demo")
	if err != nil || resp.StatusCode != http.StatusNoContent { // no notification yet
		t.Fatalf("demo topic: %v %v", resp, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no shutdown within 30s")
	}
}

// A second hub started where one already runs is refused at once with the
// flag to change: the data directory in use, or the NATS port taken.
func TestRun_SecondHubIsToldWhichFlagToChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	_, done := startHub(t, ctx, []string{"--listen", "127.0.0.1:0", "--data-dir", dir, "--nats-listen", "off"}, "first hub")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"same data dir": {[]string{"--data-dir", dir, "--nats-listen", "off"}, "--data-dir"},
		"taken port":    {[]string{"--data-dir", t.TempDir(), "--nats-listen", taken.Addr().String()}, "--nats-listen " + taken.Addr().String()},
	} {
		t.Run(name, func(t *testing.T) {
			// A hub that waited for the directory or the port to come free
			// would still be waiting when this deadline ends.
			runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			err := run(runCtx, append([]string{"--listen", "127.0.0.1:0"}, tc.args...), noEnv, io.Discard, func(server.Started) { t.Error("second hub started") })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("second hub: %v, want an error naming %s", err, tc.want)
			}
			if runCtx.Err() != nil {
				t.Errorf("refused only once its context ended (%v), want at once", runCtx.Err())
			}
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first hub: %v", err)
	}
}

// A channel the channels file gets wrong is named by its place, name and
// topic, each on its own (they ran together as "nhttp://…").
func TestRun_ChannelsFileErrorNamesTheChannel(t *testing.T) {
	file := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(file, []byte(`[{"name":"ok","topic":"http://127.0.0.1:1/ok","trust":"open"},{"name":"n","topic":"http://127.0.0.1:1/x","trust":"carrier-pigeon"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, []string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--nats-listen", "off", "--channels", file}, noEnv, io.Discard, func(server.Started) { t.Error("hub started with a bad channel") })
	if err == nil || !strings.Contains(err.Error(), `channel 2 (name "n", topic "http://127.0.0.1:1/x")`) {
		t.Fatalf("err = %v, want the second channel named by name and topic", err)
	}
}

// docs/settings.md quotes --help as it is.
func TestHelp_SettingsPageIsCurrent(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, noEnv, &out, nil); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err %v, want flag.ErrHelp", err)
	}
	docstest.Same(t, "settings.md", "## cmd/hub", out.String(), "scripts/settings-doc.sh")
}

// The channels file the README shows is one the hub takes.
func TestRun_READMEChannelsSampleIsAccepted(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "```json\n[")
	if start < 0 {
		t.Fatal("README has no channels file sample")
	}
	sample := readme[start+len("```json\n"):]
	sample = sample[:strings.Index(sample, "```")]
	file := filepath.Join(t.TempDir(), "channels.json")
	if err := os.WriteFile(file, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, done := startHub(t, ctx, []string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--nats-listen", "off", "--channels", file}, "the README's channels file refused")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// By default the hub stops the runtime's periodic collection once it has
// gone --gc-idle without one (GOGC off, a memory limit where GOGC=100
// collects next: internal/gcgov), as its Go collector's gauges show, and
// gives the pacing back when it stops; --gc runtime and GOGC or GOMEMLIMIT
// in the environment leave the runtime's.
func TestRun_GCIdlePacingUnlessTheRuntimeIsAsked(t *testing.T) {
	for name, tc := range map[string]struct {
		args     []string
		env      string
		governed bool
	}{
		"default":      {governed: true},
		"--gc runtime": {args: []string{"--gc", "runtime"}},
		"GOGC set":     {env: "GOGC"},
		"GOMEMLIMIT":   {env: "GOMEMLIMIT"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, os.Getenv(tc.env)) // the runtime read it at start; the hub looks at it again
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			args := append([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--nats-listen", "off", "--gc-idle", "1s"}, tc.args...)
			st, done := startHub(t, ctx, args, "hub")
			// Watch the gauges for up to 20 s: a governed hub turns GOGC off
			// within a few seconds of a collection-free second; the others
			// never do.
			watch := 20 * time.Second
			if !tc.governed {
				watch = 4 * time.Second
			}
			var gogc, limit float64
			off := false
			for deadline := time.Now().Add(watch); !off && time.Now().Before(deadline); {
				g := gauges(t, st.Addr, "go_gc_gogc_percent", "go_gc_gomemlimit_bytes") // one scrape: the two agree
				gogc, limit = g[0], g[1]
				off = gogc == -1 || gogc >= 1<<63 // the runtime reports off as uint64(-1)
				if !off {
					// a scrape allocates: not so often that the hub collects every second
					time.Sleep(700 * time.Millisecond)
				}
			}
			if tc.governed {
				if !off || limit <= 0 || limit >= 1<<62 {
					t.Errorf("go_gc_gogc_percent %g, go_gc_gomemlimit_bytes %g after %v: want GOGC off (-1) and a memory limit once idle", gogc, limit, watch)
				}
			} else if off || limit < 1<<62 {
				t.Errorf("go_gc_gogc_percent %g, go_gc_gomemlimit_bytes %g: want the runtime's 100 and no limit", gogc, limit)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			if p := debug.SetGCPercent(100); p != 100 {
				t.Errorf("GOGC %d after the hub stopped, want the runtime's 100 back", p)
			}
			if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
				t.Errorf("memory limit %d after the hub stopped, want none", l)
			}
		})
	}
}

// gauges reads the values of series of the hub's /metrics, from one
// scrape.
func gauges(t *testing.T, addr string, names ...string) []float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(names))
	for i, name := range names {
		found := false
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				if out[i], err = strconv.ParseFloat(v, 64); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				found = true
			}
		}
		if !found {
			t.Fatalf("/metrics has no %s", name)
		}
	}
	return out
}

// startHub runs the hub with args until ctx ends and returns where it
// serves and the channel run's error comes on, failing the test with what
// (the hub's role) when it exits or is not ready within 30 s.
func startHub(t *testing.T, ctx context.Context, args []string, what string) (server.Started, <-chan error) {
	t.Helper()
	ready := make(chan server.Started, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, noEnv, io.Discard, func(s server.Started) { ready <- s }) }()
	select {
	case st := <-ready:
		return st, done
	case err := <-done:
		t.Fatalf("%s: %v", what, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not ready within 30s", what)
	}
	return server.Started{}, done
}
