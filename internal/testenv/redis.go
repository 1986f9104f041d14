package testenv

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
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
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: run `make test`, which installs it")
	}
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin,
		"--bind", "127.0.0.1",
		"--port", fmt.Sprint(port),
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "yes",
	)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	deadline := time.Now().Add(RedisStartTimeout)
	for {
		if ping(addr) {
			return "redis://" + addr + "/0"
		}
		select {
		case <-exited:
			t.Fatalf("testenv: redis-server exited before answering PING:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: redis-server on %s did not answer PING within %s", addr, RedisStartTimeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not synchronisation
	}
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

// freePort asks the kernel for a free loopback TCP port.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
