package live_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

// TestWebSocket_IdleConnectionMemory opens idle sessions with minimal raw
// clients and reports the Go heap and stack they cost per connection, both
// ends included (the client end is one net.Conn). It fails above 16 KiB.
func TestWebSocket_IdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens many connections")
	}
	const n = 400
	e := newWSEnv(t, wsEnvOpts{})
	addr := e.srv.Listener.Addr().String()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /ws?channels=* HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr)
		_ = c.SetReadDeadline(time.Now().Add(wsTimeout))
		var head []byte
		one := make([]byte, 1)
		for !bytes.HasSuffix(head, []byte("\r\n\r\n")) { // unbuffered: nothing of the first frame is consumed
			if _, err := c.Read(one); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			head = append(head, one[0])
		}
		if !bytes.HasPrefix(head, []byte("HTTP/1.1 101")) {
			t.Fatalf("handshake: %q", head)
		}
		// The live frame, once the session's writer is at its idle wait.
		hdr := make([]byte, 2)
		if _, err := io.ReadFull(c, hdr); err != nil {
			t.Fatal(err)
		}
		payload := make([]byte, hdr[1]&0x7f)
		if _, err := io.ReadFull(c, payload); err != nil || !bytes.Contains(payload, []byte(`"live"`)) {
			t.Fatalf("first frame %q: %v", payload, err)
		}
		return c
	}
	warm := dial() // starts the dispatcher and warms pools
	defer warm.Close()
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.WebSocketCount() == 1 })
	before := memInUse()
	conns := make([]net.Conn, 0, n)
	for range n {
		conns = append(conns, dial())
	}
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.WebSocketCount() == n+1 }, "%d sessions", n+1)
	after := memInUse()
	per := (int64(after) - int64(before)) / n
	t.Logf("idle WebSocket: %d bytes per connection (Go heap + stacks, hub and raw client), %d connections", per, n)
	for _, c := range conns {
		c.Close()
	}
	if per > 16<<10 {
		t.Errorf("idle connection costs %d bytes, want at most 16 KiB", per)
	}
}

// memInUse returns live heap plus goroutine stacks after a collection.
func memInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}
