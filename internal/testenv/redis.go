package testenv

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RedisStartTimeout bounds how long Redis waits for redis-server to answer.
const RedisStartTimeout = 10 * time.Second

// Redis starts a redis-server on a free loopback port with a temporary
// directory and no persistence, waits until it answers PING, and returns
// its redis:// URL. The server is killed when the test ends. The test
// fails when redis-server is not installed.
func Redis(t testing.TB) string {
	t.Helper()
	return startRedis(t, "--appendonly", "no").URL
}

// RedisServer is a redis-server process a test can stop, restart on the
// same port with the same data, and pause, to see how the code under test
// lives through it.
type RedisServer struct {
	URL  string // redis://127.0.0.1:port/0
	addr string
	args []string
	t    testing.TB

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// RestartableRedis is Redis with an append-only file written on every
// command, so that what was written survives Stop and Start.
func RestartableRedis(t testing.TB) *RedisServer {
	t.Helper()
	return startRedis(t, "--appendonly", "yes", "--appendfsync", "always")
}

func startRedis(t testing.TB, persistence ...string) *RedisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: run `make test`, which installs it")
	}
	port := FreePort(t)
	r := &RedisServer{t: t, addr: net.JoinHostPort("127.0.0.1", fmt.Sprint(port))}
	r.URL = "redis://" + r.addr + "/0"
	r.args = append([]string{bin,
		"--bind", "127.0.0.1",
		"--port", fmt.Sprint(port),
		"--dir", t.TempDir(),
		"--save", "",
		"--protected-mode", "yes",
	}, persistence...)
	t.Cleanup(r.kill)
	r.Start()
	return r
}

// Start starts the server (again, after Stop) on its port and waits until
// it answers PING.
func (r *RedisServer) Start() {
	r.t.Helper()
	cmd := exec.Command(r.args[0], r.args[1:]...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("testenv: start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	r.mu.Lock()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	deadline := time.Now().Add(RedisStartTimeout)
	for !ping(r.addr) {
		select {
		case <-exited:
			r.t.Fatalf("testenv: redis-server exited before answering PING:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("testenv: redis-server on %s did not answer PING within %s", r.addr, RedisStartTimeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
}

// Stop ends the server with SIGTERM (it writes its data and exits) and
// waits until it has.
func (r *RedisServer) Stop() {
	r.signal(syscall.SIGTERM)
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	<-exited
}

// Pause stops the server with SIGSTOP: connections stay open and nothing
// answers, as a server stuck or cut off by the network would behave, until
// Resume.
func (r *RedisServer) Pause() { r.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (r *RedisServer) Resume() { r.signal(syscall.SIGCONT) }

func (r *RedisServer) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.cmd.Process.Signal(sig)
}

// kill ends the server for good when the test ends, paused or not.
func (r *RedisServer) kill() {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// ping sends one inline PING and reports whether +PONG came back.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
