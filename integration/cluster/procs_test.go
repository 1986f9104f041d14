package cluster_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one child process of the cluster, restartable with the same
// arguments.
type proc struct {
	t    *testing.T
	name string
	bin  string
	args []string
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

func newProc(t *testing.T, dir, name, bin string, args ...string) *proc {
	p := &proc{t: t, name: name, bin: bin, args: args, log: filepath.Join(dir, name+".log")}
	t.Cleanup(func() { p.signal(syscall.SIGKILL) })
	return p
}

// start launches the process, appending its output to its log file.
func (p *proc) start() {
	p.t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	fmt.Fprintf(f, "=== start %s %s\n", p.name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
}

// signal sends sig and waits (bounded) for the process to exit.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// tail returns the last lines of the process log, for failure reports.
func (p *proc) tail(n int) string {
	f, err := os.Open(p.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// build compiles a main package of the module (or a dependency) into dir.
func build(t *testing.T, dir, out, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, out)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitReady waits until url answers 200.
func waitReady(t *testing.T, url string, timeout time.Duration, p *proc) {
	t.Helper()
	ok := false
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				ok = true
				break
			}
		}
		time.Sleep(50 * time.Millisecond) // poll interval with a deadline
	}
	if !ok {
		t.Fatalf("%s not ready within %v; log:\n%s", url, timeout, p.tail(30))
	}
}

// waitPort waits until a TCP port accepts connections.
func waitPort(t *testing.T, port int, p *proc) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond) // poll interval with a deadline
	}
	t.Fatalf("%s never opened port %d; log:\n%s", p.name, port, p.tail(30))
}
