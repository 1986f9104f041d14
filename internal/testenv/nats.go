package testenv

import (
	"testing"

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
