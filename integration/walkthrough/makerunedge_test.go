package walkthrough_test

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// `make run-edge` beside `make run`, as the README has them: the edge links
// to the demo's hub (its leaf listener, the shared leaf password), takes
// the origin's demo channel and serves the origin's notifications of it.
func TestMakeRunEdge_ServesTheOriginsDemoChannel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo and an edge hub")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := func(args ...string) (*output, <-chan struct{}) {
		cmd, out, ended := startMake(t, ctx, root, args...)
		done := make(chan struct{})
		go func() { <-ended; close(done) }()
		t.Cleanup(func() { // Ctrl-C, then a kill if it does not stop
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		})
		return out, done
	}
	origin, originDone := start("run", "DEMO_BIN="+filepath.Join(t.TempDir(), "demo"))
	waitFor(t, "make run", origin, regexp.MustCompile(`source +published seq`), 4*time.Minute, originDone)
	edge, edgeDone := start("run-edge", "EDGE_DATA="+t.TempDir())

	get := func(path string) (int, string) {
		resp, err := http.Get("http://127.0.0.1:8081" + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testenv.Eventually(t, 4*time.Minute, func() bool {
		select {
		case <-edgeDone:
			t.Fatalf("make run-edge exited:\n%s", edge)
		default:
		}
		status, _ := get("/readyz")
		return status == http.StatusOK
	}, "the edge of make run-edge is not ready")
	// the origin's demo channel at the edge, with the origin's notifications
	// (the demo changes its Source every few seconds)
	testenv.Eventually(t, 2*time.Minute, func() bool {
		status, body := get(wire.ChangeListPath("demo"))
		return status == http.StatusOK && strings.Contains(body, "<url>")
	}, "the edge serves no Change List of the origin's demo channel with entries")
}
