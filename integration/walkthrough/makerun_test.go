package walkthrough_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C on `make run` (SIGINT to the terminal's process group: make, the
// demo) stops the demo cleanly: it compares the mirror with the Source and
// exits 0, so make reports no "make: *** … Error 1" (as it did of `go run`,
// which exits 1 after any SIGINT). GNU make itself, interrupted, waits for
// its recipe and then ends by the same signal, as it does after every
// Ctrl-C: that, or status 0, is what make may end with.
func TestMakeRun_CtrlCStopsCleanlyWithoutAnError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, out, done := startMake(t, ctx, root, "run", "DEMO_BIN="+filepath.Join(t.TempDir(), "demo"))
	waitFor(t, "make run", out, regexp.MustCompile(`source +published seq`), 3*time.Minute, nil)
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("make run did not stop within a minute of Ctrl-C:\n%s", out)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	interrupted := ee != nil && ee.Sys().(syscall.WaitStatus).Signaled() && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT
	got := out.String()
	if (err != nil && !interrupted) || strings.Contains(got, "make: ***") || !strings.Contains(got, "identical: true") {
		t.Fatalf("make run after Ctrl-C: %v, want status 0 (or make's own SIGINT), \"identical: true\" and no make error:\n%s", err, got)
	}
}

// startMake starts make with args in dir as a terminal starts a job, in a
// process group of its own (so a Ctrl-C, SIGINT to the group, reaches make
// and what it runs): its output, and its end.
func startMake(t *testing.T, ctx context.Context, dir string, args ...string) (*exec.Cmd, *output, <-chan error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = dir
	out := &output{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, out, done
}
