package testenv

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func TestNATS_ConnectionWorks(t *testing.T) {
	_, nc := NATS(t)
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestRedis_AnswersPingOnLoopback(t *testing.T) {
	u := Redis(t)
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(p.Hostname()); ip == nil || !ip.IsLoopback() {
		t.Fatalf("redis URL %s is not on loopback", u)
	}
	if !ping(p.Host) {
		t.Fatalf("no PONG from %s", u)
	}
}

func TestEventually_WaitsForCondition(t *testing.T) {
	var n atomic.Int32
	go func() {
		for n.Load() < 3 {
			n.Add(1)
		}
	}()
	Eventually(t, 5*time.Second, func() bool { return n.Load() >= 3 }, "counter reaching %d", 3)
}

func TestClock_AdvanceMovesNowOnly(t *testing.T) {
	var c Clock
	before := time.Now()
	if got := c.Now(); got.Before(before) || got.Sub(before) > time.Minute {
		t.Fatalf("a new Clock reads %s, want about %s", got, before)
	}
	c.Advance(time.Hour)
	if got := c.Now(); time.Until(got) < 59*time.Minute {
		t.Fatalf("after Advance(1h) the clock reads %s, %s ahead", got, time.Until(got))
	}
}

// A restarted Redis answers on the same URL with what was written before;
// a paused one does not answer until resumed.
func TestRestartableRedis_StopStartKeepsPortAndData(t *testing.T) {
	r := RestartableRedis(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(r.URL, "redis://"), "/0")
	send := func(cmd string) string {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "$") && line != "$-1\r\n" {
			line, _ = r.ReadString('\n')
		}
		return strings.TrimSpace(line)
	}
	if got := send("SET k v"); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	r.Stop()
	if ping(addr) {
		t.Fatal("a stopped Redis answers PING")
	}
	r.Start()
	if got := send("GET k"); got != "v" {
		t.Fatalf("GET after restart: %q, want v", got)
	}
	r.Pause()
	if ping(addr) {
		t.Fatal("a paused Redis answers PING")
	}
	r.Resume()
	Eventually(t, 5*time.Second, func() bool { return ping(addr) }, "PONG after Resume")
}

// A restarted NATS server answers on the same URL; Disconnect drops the
// connections named as asked.
func TestRestartableNATS_RestartAndDisconnect(t *testing.T) {
	n := RestartableNATS(t)
	nc, err := nats.Connect(n.URL(), nats.Name("probe"), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := n.Disconnect("probe"); got != 1 {
		t.Fatalf("Disconnect closed %d connections, want 1", got)
	}
	n.Stop()
	n.Start()
	Eventually(t, 10*time.Second, func() bool { return nc.IsConnected() && nc.FlushTimeout(time.Second) == nil }, "reconnected to the restarted server")
}

// FreePort hands out distinct ports, each bindable, and none from the
// kernel's ephemeral range where the machine says what it is.
func TestFreePort_DistinctBindableOutsideTheEphemeralRange(t *testing.T) {
	lo, known := ephemeralStart()
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if known && lo > belowEphemeral+1000 && (p < belowEphemeral || p >= lo) {
			t.Fatalf("port %d outside [%d, %d)", p, belowEphemeral, lo)
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d: %v", p, err)
		}
		_ = l.Close()
	}
}

// portsEnv names the variable under which TestFreePort_DistinctAcrossTestBinaries
// runs this test binary again as another test binary drawing ports.
const portsEnv = "RSHUB_TESTENV_PORTS_CHILD"

// Two test binaries running at once, as `go test ./...` runs packages,
// never get the same port: the second draws 200 while the first holds
// 200 it drew and has not bound.
func TestFreePort_DistinctAcrossTestBinaries(t *testing.T) {
	if os.Getenv(portsEnv) != "" {
		for range 200 {
			fmt.Println("port", FreePort(t))
		}
		return
	}
	mine := map[int]bool{}
	for range 200 {
		mine[FreePort(t)] = true
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestFreePort_DistinctAcrossTestBinaries$", "-test.count=1")
	cmd.Env = append(os.Environ(), portsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("other test binary: %v\n%s", err, out)
	}
	got := 0
	for _, line := range strings.Split(string(out), "\n") {
		var p int
		if _, err := fmt.Sscanf(line, "port %d", &p); err != nil {
			continue
		}
		got++
		if mine[p] {
			t.Errorf("port %d handed to both test binaries", p)
		}
	}
	if got != 200 {
		t.Fatalf("the other test binary drew %d ports, want 200:\n%s", got, out)
	}
}
