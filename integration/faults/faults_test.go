package faults

import (
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/internal/testproc"
)

// notifications is how many notifications each run publishes; the fault
// comes after faultAfter of them are acknowledged.
const (
	notifications = 200
	faultAfter    = 60
)

// underLoad publishes notifications 1…notifications-1 while fault runs
// once faultAfter are acknowledged, measures how long the hub takes to be
// ready and to acknowledge publishes again, then requires every
// acknowledged notification at every subscriber in order.
func underLoad(t *testing.T, h *hub, fault func()) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; n < notifications; n++ {
			h.publish(n, time.Minute)
		}
	}()
	testproc.WaitFor(t, time.Minute, "load under way", func() (bool, string) {
		return h.ackCount() >= faultAfter, strconv.Itoa(h.ackCount()) + " acknowledged"
	})
	before := h.ackCount()
	at := time.Now()
	fault()
	injected := time.Since(at)
	testproc.WaitFor(t, 60*time.Second, "hub ready and acknowledging again", func() (bool, string) {
		return h.ready() && h.ackCount() > before, "not yet"
	})
	recovered := time.Since(at)
	wg.Wait()
	h.mu.Lock()
	acked := append([]int(nil), h.acked...)
	h.mu.Unlock()
	drain := h.waitAll(acked, 90*time.Second)
	t.Logf("fault took %v to inject; hub ready and acknowledging %v after it; %d acknowledged notifications at each of %d subscribers in order, drained %v after the last publish",
		injected.Round(time.Millisecond), recovered.Round(time.Millisecond), len(acked), len(h.recv), drain.Round(time.Millisecond))
}

func TestFaults_NATSConnectionKickedByServer(t *testing.T) {
	ns := startNATS(t)
	h := startHub(t, ns.url(), "")
	underLoad(t, h, func() {
		ids := ns.clients("rshub")
		if len(ids) == 0 {
			t.Fatal("the hub's NATS connection is not on the server")
		}
		ns.mu.Lock()
		srv := ns.srv
		ns.mu.Unlock()
		for _, id := range ids {
			if err := srv.DisconnectClientByID(id); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The server refuses the hub's next protocol line and closes the
// connection with -ERR, which nats.go treats as final (the connection is
// CLOSED and never reconnects by itself): the hub must dial again. The
// server runs as a process here because its in-process option reload races
// with its own readers.
func TestFaults_NATSConnectionClosedForGoodByProtocolError(t *testing.T) {
	ns := startNATSProcess(t)
	h := startHub(t, ns.url(), "")
	if n := ns.clients("rshub"); n != 1 {
		t.Fatalf("the server lists %d connections of the hub, want 1", n)
	}
	underLoad(t, h, func() {
		ns.reload(16)
		testproc.WaitFor(t, 30*time.Second, "the hub's connection closed by the server", func() (bool, string) {
			n := ns.clients("rshub")
			return n == 0, strconv.Itoa(n) + " connections named rshub"
		})
		ns.reload(server.MAX_CONTROL_LINE_SIZE)
	})
}

func TestFaults_NATSServerRestarted(t *testing.T) {
	ns := startNATS(t)
	h := startHub(t, ns.url(), "")
	underLoad(t, h, func() {
		ns.stop()
		ns.start()
	})
}

func TestFaults_RedisRestarted(t *testing.T) {
	ns := startNATS(t)
	port := testenv.FreePort(t)
	redis := testproc.Start(t, "redis", "redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--dir", t.TempDir(), "--appendonly", "yes", "--appendfsync", "always", "--save", "")
	testproc.WaitPort(t, redis, port, 20*time.Second)
	h := startHub(t, ns.url(), "redis://127.0.0.1:"+strconv.Itoa(port)+"/0")
	underLoad(t, h, func() {
		redis.Signal(syscall.SIGTERM)
		<-redis.Done()
		redis.Restart(t)
		testproc.WaitPort(t, redis, port, 20*time.Second)
	})
}
