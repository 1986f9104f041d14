package testenv

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/internal/embednats"
)

// NATS starts an in-process NATS server with JetStream on a temporary data
// directory and returns it with one connection. Both are closed when the
// test ends.
func NATS(t testing.TB) (*embednats.Server, *nats.Conn) {
	t.Helper()
	srv, err := embednats.Start(embednats.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(nc.Close)
	return srv, nc
}

// NATSServer is an in-process nats-server with JetStream on a fixed
// loopback port, which a test can restart on the same port and store
// directory, and whose client connections it can drop, to see how the code
// under test lives through it.
type NATSServer struct {
	t    testing.TB
	opts server.Options
	mu   sync.Mutex
	srv  *server.Server
}

// RestartableNATS starts a NATSServer; it is shut down when the test ends.
func RestartableNATS(t testing.TB) *NATSServer {
	t.Helper()
	n := &NATSServer{t: t, opts: server.Options{
		ServerName: "testenv", Host: "127.0.0.1", Port: FreePort(t),
		JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
	}}
	n.Start()
	t.Cleanup(n.Stop)
	return n
}

// URL is the server's client URL.
func (n *NATSServer) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.opts.Port) }

// Start starts the server (again, after Stop) and waits until it takes
// connections.
func (n *NATSServer) Start() {
	n.t.Helper()
	opts := n.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		n.t.Fatalf("testenv: nats-server: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		n.t.Fatal("testenv: nats-server not ready within 20s")
	}
	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()
}

// Stop shuts the server down and waits until it has.
func (n *NATSServer) Stop() {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Disconnect closes, from the server's side, every client connection
// named name, and returns how many it closed.
func (n *NATSServer) Disconnect(name string) int {
	n.t.Helper()
	n.mu.Lock()
	srv := n.srv
	n.mu.Unlock()
	cz, err := srv.Connz(&server.ConnzOptions{Limit: 1024})
	if err != nil {
		n.t.Fatalf("testenv: connz: %v", err)
	}
	closed := 0
	for _, c := range cz.Conns {
		if c.Name == name && srv.DisconnectClientByID(c.Cid) == nil {
			closed++
		}
	}
	return closed
}
