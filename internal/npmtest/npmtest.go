// Package npmtest installs the npm packages a test runs (a Node.js client
// nobody here wrote, a test runner) into the user's cache, never into the
// repository, once per cache folder.
package npmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Tool finds a command, skipping the test without it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: scripts/deps.sh installs node, npm and chromium for these tests", name)
	}
	return p
}

// Install makes the folder folder of the user's cache hold packages (npm
// specs such as "eventsource@4" or "@playwright/test@1.60.0"), running
// npm install with env added when one of them is missing, and returns its
// node_modules. The test skips without npm and fails when npm does.
func Install(t testing.TB, folder string, env []string, packages ...string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, folder)
	modules := filepath.Join(dir, "node_modules")
	missing := false
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(modules, name(p), "package.json")); err != nil {
			missing = true
		}
	}
	if !missing {
		return modules
	}
	npm := Tool(t, "npm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"`+folder+`","private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund"}, packages...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		s := string(out)
		if len(s) > 4000 {
			s = "…" + s[len(s)-4000:]
		}
		t.Fatalf("npm install %s: %v: %s", strings.Join(packages, " "), err, s)
	}
	return modules
}

// name is the package name of an npm spec: without its version.
func name(spec string) string {
	if i := strings.LastIndex(spec, "@"); i > 0 {
		return spec[:i]
	}
	return spec
}
