package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// depsRun runs scripts/deps.sh with a PATH holding only the stub commands
// given (name → shell body), and returns its combined output, whether it
// succeeded, and what the stubs recorded in calls.log.
func depsRun(t *testing.T, stubs map[string]string, env ...string) (out string, ok bool, calls []string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "calls.log")
	for name, body := range stubs {
		script := "#!" + bash + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, filepath.Join(root(t), "scripts", "deps.sh"))
	cmd.Env = append([]string{"PATH=" + bin, "CALLS=" + log}, env...)
	b, err := cmd.CombinedOutput()
	raw, _ := os.ReadFile(log)
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l != "" {
			calls = append(calls, l)
		}
	}
	return string(b), err == nil, calls
}

const (
	stubAptGet = `echo "apt-get $*" >> "$CALLS"`
	stubSudo   = `echo "sudo $1" >> "$CALLS"; exec "$@"`
	stubTrue   = `exit 0`
)

// The test command installs what it needs on a fresh machine without sudo
// when it runs as root, waits for a dpkg lock another apt-get holds instead
// of failing at once, and installs nothing twice.
func TestDeps_AptGet(t *testing.T) {
	t.Run("root runs apt-get directly and waits for the lock", func(t *testing.T) {
		out, ok, calls := depsRun(t, map[string]string{"id": `echo 0`, "apt-get": stubAptGet, "sudo": stubSudo})
		if !ok {
			t.Fatalf("deps.sh failed: %s", out)
		}
		if len(calls) != 2 {
			t.Fatalf("calls = %q, want apt-get update and install", calls)
		}
		for _, c := range calls {
			if !strings.HasPrefix(c, "apt-get ") {
				t.Errorf("call %q: want apt-get run directly as root", c)
			}
			if !strings.Contains(c, "-o DPkg::Lock::Timeout=600") {
				t.Errorf("call %q: want it to wait for the dpkg lock", c)
			}
		}
		for _, pkg := range []string{"install", "redis-server", "curl", "openssl", "python3", "chromium", "nodejs", "npm"} {
			if !strings.Contains(calls[1], pkg) {
				t.Errorf("install call %q: want %s", calls[1], pkg)
			}
		}
	})
	t.Run("another user goes through sudo", func(t *testing.T) {
		out, ok, calls := depsRun(t, map[string]string{"id": `echo 1000`, "apt-get": stubAptGet, "sudo": stubSudo},
			"RSHUB_NO_BROWSER=1", "RSHUB_APT_LOCK_TIMEOUT=5")
		if !ok {
			t.Fatalf("deps.sh failed: %s", out)
		}
		want := []string{"sudo apt-get", "apt-get -o DPkg::Lock::Timeout=5 update -qq", "sudo apt-get",
			"apt-get -o DPkg::Lock::Timeout=5 install -y -qq --no-install-recommends redis-server curl openssl python3"}
		if strings.Join(calls, "\n") != strings.Join(want, "\n") {
			t.Fatalf("calls = %q, want %q", calls, want)
		}
	})
	t.Run("another user without sudo gets a clear error", func(t *testing.T) {
		out, ok, calls := depsRun(t, map[string]string{"id": `echo 1000`, "apt-get": stubAptGet})
		if ok || len(calls) != 0 || !strings.Contains(out, "needs root or sudo") {
			t.Fatalf("ok=%v calls=%q out=%q: want a refusal naming root or sudo", ok, calls, out)
		}
	})
	t.Run("nothing missing, nothing run", func(t *testing.T) {
		out, ok, calls := depsRun(t, map[string]string{"id": `echo 0`, "apt-get": stubAptGet,
			"redis-server": stubTrue, "curl": stubTrue, "openssl": stubTrue, "python3": stubTrue, "chromium": stubTrue,
			"node": stubTrue, "npm": stubTrue})
		if !ok || len(calls) != 0 {
			t.Fatalf("ok=%v calls=%q out=%q: want no apt-get", ok, calls, out)
		}
	})
}
