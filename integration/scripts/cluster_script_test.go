// Package scripts_test runs the repository's shell scripts as a user
// would, and checks that what they print works.
package scripts_test

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
)

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// freeBase returns a port p such that p..p+n-1 are free on loopback now,
// below the range the kernel hands out for outgoing connections and ":0"
// listeners (32768 and up on Linux by default): the script binds them only
// after it has built its binaries, and a port of that range free now could
// be the ephemeral port of another test's connection by then.
func freeBase(t *testing.T, n int, taken map[int]bool) int {
	t.Helper()
	const lo, hi = 20000, 32000
	for range 500 {
		base := lo + rand.IntN(hi-lo-n)
		ok := true
		for p := base; p < base+n && ok; p++ {
			if taken[p] {
				ok = false
				break
			}
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			for p := base; p < base+n; p++ {
				taken[p] = true
			}
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// examples/cluster/cluster.sh ends with three ready hubs that hold an admin
// token and a channel, and the publish command it prints is answered 200 by
// the cluster; its errors are not silenced, and stop stops everything.
func TestClusterScript_StartPublishStop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a cluster")
	}
	for _, bin := range []string{"redis-server", "curl", "bash"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	dir := t.TempDir()
	taken := map[int]bool{}
	env := append(os.Environ(),
		"RSHUB_CLUSTER_DIR="+dir,
		fmt.Sprintf("HUB_BASE=%d", freeBase(t, 3, taken)),
		fmt.Sprintf("NATS_BASE=%d", freeBase(t, 3, taken)),
		fmt.Sprintf("ROUTE_BASE=%d", freeBase(t, 3, taken)),
		fmt.Sprintf("REDIS_PORT=%d", freeBase(t, 1, taken)),
	)
	script := filepath.Join(root(t), "examples", "cluster", "cluster.sh")
	run := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = env
		cmd.Dir = root(t)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = run("stop") })

	begun := time.Now()
	out, err := run("start")
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	t.Logf("cluster.sh start took %v", time.Since(begun).Round(time.Second))
	if strings.Contains(out, "Connection refused") {
		t.Errorf("start printed connection errors while waiting:\n%s", out)
	}
	token := regexp.MustCompile(`admin token: (\S+)`).FindStringSubmatch(out)
	if token == nil {
		t.Fatalf("start printed no admin token:\n%s", out)
	}
	publish := regexp.MustCompile(`(?s)publish:\n(.*)$`).FindStringSubmatch(out)
	if publish == nil {
		t.Fatalf("start printed no publish command:\n%s", out)
	}
	cmd := exec.Command("bash", "-c", strings.TrimSpace(publish[1])+" -s -o /dev/null -w '%{http_code}'")
	cmd.Dir = root(t)
	status, err := cmd.Output()
	if err != nil || string(status) != "200" {
		t.Fatalf("the printed publish command: %v, status %q, want 200\n%s", err, status, publish[1])
	}

	// every hub takes the token and knows the channel
	hubs := regexp.MustCompile(`hubs (http://\S+) \.\. (http://\S+)`).FindStringSubmatch(out)
	if hubs == nil {
		t.Fatalf("start printed no hub URLs:\n%s", out)
	}
	contract := hubtest.LoadContract(t) // each answer checked, through a validating proxy
	for _, u := range []string{hubs[1], hubs[2]} {
		c := exec.Command("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer "+token[1], contract.Proxy(t, u)+"admin/channels/demo")
		got, err := c.Output()
		if err != nil || string(got) != "200" {
			t.Errorf("GET %sadmin/channels/demo with the token: %v %q, want 200", u, err, got)
		}
	}

	// a second start on a running cluster fails and says why, on stderr
	if out, err := run("start"); err == nil {
		t.Errorf("a second start succeeded:\n%s", out)
	} else if !strings.Contains(out, "already runs from "+dir) {
		t.Errorf("a failing start names no log to read:\n%s", out)
	}

	if out, err := run("stop"); err != nil || !strings.Contains(out, "stopped") {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if out, _ := run("status"); strings.Contains(out, ": running") {
		t.Fatalf("processes still running after stop:\n%s", out)
	}
}
