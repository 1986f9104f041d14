package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a child process of the cluster scenario (nats-server,
// redis-server or a hub), with the tail of its output kept for error
// messages.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	out  *tailBuffer
}

// startProc runs bin with args; with logPath set, its whole output is
// also written to that file.
func startProc(name, logPath, bin string, args ...string) (*proc, error) {
	p := &proc{name: name, out: &tailBuffer{max: 8 << 10}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	var out io.Writer = p.out
	var logFile *os.File
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		logFile, out = f, io.MultiWriter(p.out, f)
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		if logFile != nil {
			logFile.Close()
		}
		close(p.done)
	}()
	return p, nil
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill() {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and kills the process when it has not ended within
// timeout.
func (p *proc) stop(timeout time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.kill()
	}
}

// failure describes the process for an error: whether it exited and the
// end of its output.
func (p *proc) failure() string {
	state := "running"
	if p.exited() {
		state = "exited"
	}
	return fmt.Sprintf("%s (%s), last output:\n%s", p.name, state, p.out.String())
}

// waitUntil polls ready (every 50 ms, a poll interval with a deadline)
// until it holds, p exits, timeout passes or ctx ends.
func (p *proc) waitUntil(ctx context.Context, what string, timeout time.Duration, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for !ready() {
		if p.exited() {
			return fmt.Errorf("%s: %s", what, p.failure())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v: %s", what, timeout, p.failure())
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// waitPort waits until addr accepts TCP connections.
func (p *proc) waitPort(ctx context.Context, addr string, timeout time.Duration) error {
	return p.waitUntil(ctx, p.name+" listening on "+addr, timeout, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
}

// waitHTTP waits until url answers 200.
func (p *proc) waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	return p.waitUntil(ctx, p.name+" ready at "+url, timeout, func() bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		drain(resp)
		return resp.StatusCode == http.StatusOK
	})
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	mu  sync.Mutex
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// clusterBinaries are the programs the cluster scenario runs.
type clusterBinaries struct {
	hub, nats, redis string
}

// buildClusterBinaries finds redis-server and builds cmd/hub and
// nats-server (from the Go module, as examples/cluster does) into dir. It
// needs the go command and the rshub module's source: src, or when src is
// "" the one the bench's module replaces (go run -C cmd/rshub-bench .).
func buildClusterBinaries(ctx context.Context, dir, src string) (clusterBinaries, error) {
	var b clusterBinaries
	redis, err := exec.LookPath("redis-server")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/redis-server"); serr != nil {
			return b, errors.New("redis-server not found on PATH or in /usr/bin: install it (apt-get install redis-server) to run the cluster scenario")
		}
		redis = "/usr/bin/redis-server"
	}
	b.redis = redis
	root, err := rshubRoot(ctx, src)
	if err != nil {
		return b, err
	}
	// one go build links both at once: into dir, named hub and nats-server
	b.hub, b.nats = filepath.Join(dir, "hub"), filepath.Join(dir, "nats-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator), "./cmd/hub", "github.com/nats-io/nats-server/v2")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return b, fmt.Errorf("cluster: go build cmd/hub and nats-server: %w\n%s", err, out)
	}
	return b, nil
}

// rshubRoot is the directory of the rshub module seen from dir ("" for
// the current one): the module the bench's own module replaces (../..), or
// the main module of an rshub checkout.
func rshubRoot(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/rshub/rshub")
	cmd.Dir = dir
	out, err := cmd.Output()
	root := strings.TrimSpace(string(out))
	if mod, rerr := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || rerr != nil || !strings.Contains(string(mod), "module github.com/rshub/rshub\n") {
		return "", fmt.Errorf("cluster: run the bench from the repository (go run -C cmd/rshub-bench .) or name an rshub checkout with --cluster-source, so it can build cmd/hub; the rshub module there is %q (%v)", root, err)
	}
	return root, nil
}
