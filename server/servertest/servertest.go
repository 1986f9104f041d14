// Package servertest starts whole hub processes in-process for tests, as
// net/http/httptest starts HTTP servers: the same wiring as cmd/hub
// (package server), embedded NATS on a temporary directory, a free loopback
// port, the demo channel, stopped when the test ends.
package servertest

import (
	"cmp"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/server"
)

// Config returns server.Defaults adjusted for tests: a free loopback port, a
// temporary data directory, no NATS listener, the demo channel (loopback
// callbacks allowed), short timeouts, and every answer validated against
// the admin API's contract (admin/openapi.json, hubtest.Validator): a
// mismatch fails t.
func Config(t testing.TB) server.Config {
	cfg := server.Defaults()
	cfg.Listen, cfg.DataDir, cfg.NATSListen, cfg.Demo = "127.0.0.1:0", t.TempDir(), "off", true
	cfg.Middleware = hubtest.Validator(t)
	cfg.LogLevel, cfg.ShutdownTimeout, cfg.StartupTimeout = "warn", 5*time.Second, 30*time.Second
	return cfg
}

// Start runs a hub with Config(t) edited by each option and returns where
// it serves. The hub stops (and the test fails if it does not, or if it
// ended with an error) when the test ends. A nil logger discards logs.
func Start(t testing.TB, logger *slog.Logger, options ...func(*server.Config)) server.Started {
	t.Helper()
	cfg := Config(t)
	for _, o := range options {
		o(&cfg)
	}
	logger = cmp.Or(logger, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan server.Started, 1)
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, logger, func(s server.Started) { ready <- s }) }()
	var s server.Started
	select {
	case s = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("servertest: hub exited at start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("servertest: hub not ready within 60s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("servertest: hub: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("servertest: hub did not stop within 20s")
		}
	})
	return s
}
