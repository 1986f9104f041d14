package testenv

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
)

// Ports for processes a test starts, which bind them themselves.
//
// A port the kernel hands out for 127.0.0.1:0 comes from its ephemeral
// range (net.ipv4.ip_local_port_range), the one outgoing connections take
// their local ports from: freed again for the process to bind, it can be
// taken first by any connection any test makes, and the process fails
// with "address already in use". FreePort draws from below that range,
// which only a listener takes, and never hands out a port twice on the
// machine while the test binary that got it runs: `go test ./...` runs
// several packages' binaries at once, and a port free when one drew it
// could be drawn by another before the first one's server bound it. A
// port is claimed in this binary's memory and, across binaries, by an
// exclusive lock on a file named after it (portLock), which the kernel
// lets go of when the binary ends, however it ends.

// belowEphemeral is the lowest port FreePort draws from; the highest is
// one below the kernel's ephemeral range.
const belowEphemeral = 10000

// handed is every port FreePort returned in this test binary, so that two
// tests running at once never get the same one, with the lock that
// claims it from other test binaries (nil where locks are not taken). It
// is test support, shared by every test of the binary, and only ever
// grows: a lock is held until the binary ends.
var handed = struct {
	sync.Mutex
	ports map[int]io.Closer
}{ports: map[int]io.Closer{}}

// FreePort returns a loopback TCP port that no one listens on and no
// outgoing connection takes (see above), for a process the test starts to
// bind. Where the ephemeral range cannot be read, or leaves no room below
// it, it asks the kernel for one as 127.0.0.1:0 does.
func FreePort(t testing.TB) int {
	t.Helper()
	if lo, ok := ephemeralStart(); ok && lo > belowEphemeral+1000 {
		for range 1000 {
			p := belowEphemeral + rand.IntN(lo-belowEphemeral)
			if claim(p) && bindable(p) {
				return p
			}
		}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("testenv: free port: %v", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if claim(p) {
			return p
		}
	}
	t.Fatal("testenv: no free port found")
	return 0
}

// claim records p as handed out and reports whether it was not before,
// in this test binary or in another one that holds its lock.
func claim(p int) bool {
	handed.Lock()
	defer handed.Unlock()
	if _, ok := handed.ports[p]; ok {
		return false
	}
	lock, ok := portLock(p)
	if !ok {
		return false
	}
	handed.ports[p] = lock
	return true
}

// bindable reports whether a listener can bind 127.0.0.1:p now.
func bindable(p int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range, where
// Linux tells it.
func ephemeralStart() (int, bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil || lo <= 0 || lo > hi {
		return 0, false
	}
	return lo, true
}
