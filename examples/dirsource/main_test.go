package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// A dirsource whose hub cannot be reached says so without -v, at start
// and once per outage (not once per retry), and says when the hub answers
// again, publishing what changed meanwhile.
func TestDirsource_SaysWhenTheHubIsUnreachable(t *testing.T) {
	// the hub is reached through a gate the test opens: closed, every
	// connection is dropped as by a hub that is not running
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hubURL := "http://" + ln.Addr().String() + "/"
	st := servertest.Start(t, nil, func(c *server.Config) { c.HubURL = hubURL })
	target, _ := url.Parse("http://" + st.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var open atomic.Bool
	gate := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !open.Load() {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = gate.Serve(ln) }()
	t.Cleanup(func() { _ = gate.Close() })

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &testenv.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--dir", dir, "--listen", "127.0.0.1:0", "--hub", hubURL, "--topic", hubURL + "topics/demo", "--interval", "200ms"}, out)
	}()
	t.Cleanup(func() { cancel(); <-done })

	testenv.Eventually(t, time.Minute, func() bool { return strings.Contains(out.String(), "unreachable") }, "dirsource to say the hub is unreachable:\n%s", out)
	if !strings.Contains(out.String(), "hub "+hubURL+" unreachable") || !strings.Contains(out.String(), "go run ./cmd/hub") {
		t.Fatalf("the message names neither the hub nor how to start one:\n%s", out)
	}
	open.Store(true)
	testenv.Eventually(t, time.Minute, func() bool { return strings.Contains(out.String(), "created hello.txt") }, "the change published once the hub answers:\n%s", out)
	got := out.String()
	if n := strings.Count(got, "unreachable"); n != 1 || !strings.Contains(got, "answers again") {
		t.Fatalf("one outage reported %d times, or its end not at all:\n%s", n, got)
	}
}
