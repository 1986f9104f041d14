package natsconn_test

import (
	"context"
	"github.com/rshub/rshub/internal/testenv"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/natsconn"
)

// An in-process connection is logged as what it is, not as the default
// URL nats.go reports for it (nats://127.0.0.1:4222, which a hub started
// with --nats-listen off does not listen on).
func TestConn_LogsWhereItIsConnected(t *testing.T) {
	srv, err := embednats.Start(embednats.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	logs := &testenv.Buffer{}
	c, err := natsconn.New(context.Background(), natsconn.Config{Dial: srv.Dial, Where: "in-process (embedded server)",
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.Wait(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	got := logs.String()
	if !strings.Contains(got, `server="in-process (embedded server)"`) || strings.Contains(got, "4222") {
		t.Fatalf("log lines:\n%s\nwant the connection named in-process and no URL", got)
	}
}
