package mercure

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/npmtest"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// The suite: its module version, the Playwright it was written for, and
// the token it publishes with (HS256 with suiteKey, aud suiteAudience, iss
// suiteIssuer).
const (
	suiteModule   = "github.com/dunglas/mercure@v1.0.0-alpha.3"
	playwright    = "@playwright/test@1.60.0"
	dotenv        = "dotenv@17"
	suiteKey      = "!ChangeThisMercureHubJWTSecretKey!"
	suiteAudience = "https://localhost/.well-known/mercure"
	suiteIssuer   = "https://localhost"
)

// positives are the suite's tests in which the update must arrive within
// the suite's own 2 s timer, which starts before the EventSource opens: a
// loaded machine can spend it opening the browser's connection, so these
// may pass on a retry ("flaky"). negatives are those in which nothing
// must arrive: a retry could hide an update that leaked once, so they
// must pass at their first run.
var (
	positives = []string{"raw string", "multiple topic selectors", "URI", "URL pattern"}
	negatives = []string{
		"nonmatching raw string", "nonmatching URI", "nonmatching URL pattern",
		"private raw string", "private URI", "private URL pattern",
	}
)

// configJS is the Playwright configuration the test writes beside the
// suite's spec: chromium only, Debian's browser, one worker, a JSON report,
// and two retries of a failed test (only the positives may use them).
const configJS = `module.exports = {
  testDir: __dirname,
  timeout: 10000,
  expect: { timeout: 5000 },
  workers: 1,
  retries: 2,
  reporter: [["json", { outputFile: process.env.RSHUB_REPORT }]],
  use: {
    baseURL: process.env.BASE_URL,
    ignoreHTTPSErrors: true,
    browserName: "chromium",
    launchOptions: { executablePath: process.env.RSHUB_CHROMIUM, args: ["--no-sandbox"] },
  },
};
`

// TestConformance_MercureSuite runs the suite's spec with its own token
// and CUSTOM_ID=1 against a hub whose Mercure face expects that token's
// audience and issuer, and requires all ten of its tests. The hub runs
// with --open-topics, as the suite publishes to topics no channel has yet
// (two of them no URL: docs/usage.md § Mercure). The four tests in which
// the update must arrive wait for it only 2 s from before the browser's
// EventSource opens, so each may pass on one of Playwright's two retries
// (reported "flaky", and logged); the six in which nothing must arrive
// pass at their first run or fail the test.
func TestConformance_MercureSuite(t *testing.T) {
	node, chromium := tool(t, "node"), tool(t, "chromium")
	suite := suiteDir(t)
	modules := nodeModules(t)

	st := servertest.Start(t, nil, func(c *server.Config) {
		c.PublisherJWTKey, c.SubscriberJWTKey = suiteKey, suiteKey
		c.MercureAudience, c.MercureIssuer = suiteAudience, suiteIssuer
		c.OpenTopics = true // the suite publishes to topics no channel has yet
	})
	dir := t.TempDir()
	spec, err := os.ReadFile(filepath.Join(suite, "mercure.spec.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"mercure.spec.ts": spec, "rshub.config.js": []byte(configJS)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(modules, "@playwright", "test", "cli.js"), "test", "--config", "rshub.config.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CUSTOM_ID=1", "RSHUB_REPORT="+report, "RSHUB_CHROMIUM="+chromium,
		"BASE_URL=http://"+st.Addr+wire.PathMercure, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run() // fails when any test fails: the report says which
	results, err := readReport(report)
	if err != nil {
		t.Fatalf("no report from the suite (%v; run: %v): %s", err, runErr, tail(out.String()))
	}
	passed := 0
	names := make([]string, 0, len(results))
	for name := range results {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Logf("%-26s %s", name, results[name])
		if results[name] == "passed" || results[name] == "flaky" {
			passed++
		}
	}
	t.Logf("the Mercure conformance suite: %d of %d tests pass", passed, len(results))
	for _, name := range positives {
		if results[name] != "passed" && results[name] != "flaky" {
			t.Errorf("%s: %q, want passed (or flaky: passed on a retry)\n%s", name, results[name], tail(out.String()))
		}
	}
	for _, name := range negatives {
		if results[name] != "passed" {
			t.Errorf("%s: %q, want passed at the first run\n%s", name, results[name], tail(out.String()))
		}
	}
	if len(results) != 10 {
		t.Errorf("the suite ran %d tests, want its 10", len(results))
	}
}

// tool finds a command, skipping the test without it.
func tool(t *testing.T, name string) string {
	t.Helper()
	return npmtest.Tool(t, name)
}

// suiteDir returns the suite's directory in the module cache, downloading
// the module (the checksum database does not list these versions).
func suiteDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", suiteModule)
	cmd.Env = append(os.Environ(), "GONOSUMDB=github.com/dunglas/mercure", "GOFLAGS=-mod=mod")
	cmd.Dir = t.TempDir() // outside the module: nothing of go.mod changes
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v: %s", suiteModule, err, out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", suiteModule, err, mod.Error)
	}
	return filepath.Join(mod.Dir, "conformance-tests")
}

// nodeModules returns a node_modules directory holding Playwright's test
// runner (no browser: the suite runs Debian's Chromium), installed once
// with npm into the user's cache, never into the repository.
func nodeModules(t *testing.T) string {
	t.Helper()
	return npmtest.Install(t, "rshub-mercure-suite", []string{"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1"}, playwright, dotenv)
}

// readReport reads Playwright's JSON report: each test's title and its
// outcome: "passed" (at the first run), "flaky" (failed, then passed on a
// retry), else the status of its last run ("failed", "timedOut", ...).
func readReport(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type suite struct {
		Specs []struct {
			Title string `json:"title"`
			Tests []struct {
				Status  string `json:"status"` // expected, unexpected, flaky, skipped
				Results []struct {
					Status string `json:"status"`
				} `json:"results"`
			} `json:"tests"`
		} `json:"specs"`
		Suites []json.RawMessage `json:"suites"`
	}
	var root struct {
		Suites []json.RawMessage `json:"suites"`
	}
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func([]json.RawMessage) error
	walk = func(list []json.RawMessage) error {
		for _, raw := range list {
			var s suite
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			for _, sp := range s.Specs {
				status := "not run"
				for _, tc := range sp.Tests {
					if n := len(tc.Results); n > 0 {
						status = tc.Results[n-1].Status
					}
					if tc.Status == "flaky" {
						status = "flaky"
					}
				}
				out[sp.Title] = status
			}
			if err := walk(s.Suites); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root.Suites)
}

// tail returns the last 4000 bytes of s.
func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}
