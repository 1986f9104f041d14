// Package testproc runs the project's binaries as real processes in tests:
// build them, start and restart them with their output kept for failure
// reports, signal them (SIGKILL included), and wait for their ports and
// health endpoints with deadlines.
package testproc

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// Proc is a process started from a binary with fixed arguments; it can be
// restarted with the same ones. It is killed when the test ends, and its
// output is logged when the test failed.
type Proc struct {
	Name string
	bin  string
	args []string
	out  *testenv.Buffer

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs bin with args.
func Start(t testing.TB, name, bin string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, bin: bin, args: args, out: &testenv.Buffer{}}
	p.Restart(t)
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("--- output of %s ---\n%s", name, p.Output(6000))
		}
	})
	return p
}

// Restart starts the process again with the same arguments (after it
// exited or was stopped), appending to the same output.
func (p *Proc) Restart(t testing.TB) {
	t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	fmt.Fprintf(p.out, "=== start %s %s\n", p.Name, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// Done is closed when the current run of the process has exited.
func (p *Proc) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Signal sends sig and waits at most 20 s for the process to exit, then
// kills it; it reports whether it exited by itself.
func (p *Proc) Signal(sig syscall.Signal) bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return true
	}
	select {
	case <-done:
		return true
	default:
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
		return true
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return false
	}
}

// Notify sends sig without waiting (for example SIGHUP to reload); it
// reports whether the process was running.
func (p *Proc) Notify(sig syscall.Signal) bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
	}
	return cmd.Process.Signal(sig) == nil
}

// Kill sends SIGKILL and waits for the process to end.
func (p *Proc) Kill() { p.Signal(syscall.SIGKILL) }

// Stop sends SIGTERM and fails the test when the process does not exit
// cleanly within 20 s.
func (p *Proc) Stop(t testing.TB) {
	t.Helper()
	if !p.Signal(syscall.SIGTERM) {
		t.Errorf("%s did not stop on SIGTERM", p.Name)
	}
}

// Output returns at most the last n bytes the process wrote (all of it
// when n <= 0).
func (p *Proc) Output(n int) string {
	s := p.out.String()
	if n > 0 && len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Build compiles a main package (a path relative to the module root, like
// "./cmd/hub", or a dependency's import path) into dir/name and returns the
// binary's path.
func Build(dir, name, pkg string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// Binary is a main package for Main to build: Pkg as Build takes it,
// built as Name, its path stored in *Out.
type Binary struct {
	Out       *string
	Name, Pkg string
}

// Main is a TestMain that builds the binaries into a temporary directory
// (exiting 1 if one does not build), runs the tests, removes the directory
// and exits with the tests' code.
func Main(m *testing.M, bins ...Binary) {
	dir, err := os.MkdirTemp("", "rshub-bins-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, b := range bins {
		if *b.Out, err = Build(dir, b.Name, b.Pkg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// moduleRoot is the directory of the module this package belongs to.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// WaitFor polls cond until it holds, failing the test at the deadline with
// the last reason cond gave.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, timeout, why)
		}
		time.Sleep(50 * time.Millisecond) // poll interval, not synchronisation
	}
}

// WaitHTTP waits until url answers 200, failing early when p exits.
func WaitHTTP(t testing.TB, p *Proc, url string, timeout time.Duration) {
	t.Helper()
	WaitFor(t, timeout, p.Name+" ready", func() (bool, string) {
		select {
		case <-p.Done():
			t.Fatalf("%s exited:\n%s", p.Name, p.Output(4000))
		default:
		}
		resp, err := http.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == 200, resp.Status
	})
}

// WaitPort waits until a loopback TCP port accepts connections, failing
// early when p exits.
func WaitPort(t testing.TB, p *Proc, port int, timeout time.Duration) {
	t.Helper()
	WaitFor(t, timeout, fmt.Sprintf("%s listening on %d", p.Name, port), func() (bool, string) {
		select {
		case <-p.Done():
			t.Fatalf("%s exited:\n%s", p.Name, p.Output(4000))
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
}
