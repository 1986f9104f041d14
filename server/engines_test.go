package server

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// The log cache every reader of a hub process shares takes the process's
// own appends as they are stored, before the append returns, instead of
// reading them back from the log after a change signal: the first
// deliveries of a publish start a NATS round trip sooner.
func TestBuildDelivery_LogCacheTakesTheProcessesOwnAppends(t *testing.T) {
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := &process{cfg: Config{StartupTimeout: 20 * time.Second, NATSReplicas: 1, Listen: "127.0.0.1:0"}.withDefaults(),
		logger: slog.New(slog.DiscardHandler), nc: natsconn.FromConn(nc)}
	t.Cleanup(p.close)
	for _, step := range []func(context.Context) error{p.listen, p.openLog, p.openStore, p.buildClient, p.buildDelivery} {
		if err := step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	ready := p.tail.Changed() // closed once the cache answers from memory
	go func() { done <- p.tail.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal("the log cache did not start")
	}
	for i := range 5 {
		rec := wire.Record{Topic: "https://example.org/a", Channel: "a", ContentType: "application/xml",
			Key: "k" + strconv.Itoa(i), Body: []byte("<urlset/>")}
		seq, _, err := p.notifications.Append(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if st := p.tail.Stats(); st.Last < seq {
			t.Fatalf("append %d returned with the cache at %d: it waits for its follower to read the record back", seq, st.Last)
		}
	}
}
