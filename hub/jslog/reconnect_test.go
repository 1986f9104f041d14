package jslog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

func openConnLog(t *testing.T, c *natsconn.Conn) *jslog.Log {
	t.Helper()
	l, err := jslog.OpenConn(ctxT(t), c, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// startAppender appends to one channel in a loop and remembers what was
// acknowledged (sequence -> record index).
func startAppender(l *jslog.Log, channel string) *testenv.Writer[uint64, int] {
	return testenv.StartWriter(func(ctx context.Context, i int) (uint64, int, error) {
		seq, _, err := l.Append(ctx, record(channel, i))
		return seq, i, err
	})
}

// checkAcked fails unless every acknowledged append is in the log.
func checkAcked(t *testing.T, l *jslog.Log, channel string, acked map[uint64]int) {
	t.Helper()
	held := map[uint64]string{}
	err := l.RangeHeaders(ctxT(t), channel, 1, 1<<62, func(rec wire.Record) error {
		held[rec.Seq] = rec.Key
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for seq, i := range acked {
		if want := fmt.Sprintf("%s-%d", channel, i); held[seq] != want {
			t.Errorf("acknowledged seq %d (%s) lost: log holds %q", seq, want, held[seq])
		}
	}
}

// checkChangedFromAnotherWriter fails unless l's Changed wakes for appends
// by another writer.
func checkChangedFromAnotherWriter(t *testing.T, l, other *jslog.Log) {
	t.Helper()
	for i := range 3 {
		changed := l.Changed()
		seq := mustAppend(t, other, record("other", i))
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("append %d by another writer: Changed not closed within 5s", seq)
		}
		if rec, err := l.Next(ctxT(t), "other", seq); err != nil || rec.Seq != seq {
			t.Fatalf("after wake: Next(%d) = %d, %v", seq, rec.Seq, err)
		}
	}
}

func TestOpenConn_HealsAfterItsConnectionIsClosed(t *testing.T) {
	srv, _ := testenv.NATS(t)
	c := testenv.NATSConn(t, srv.Dial)
	l := openConnLog(t, c)
	a := startAppender(l, "heal")
	a.WaitOK(t, 20, "before the close")
	nc, gen := c.Current()
	nc.Close()
	testenv.Eventually(t, 10*time.Second, func() bool { _, g := c.Current(); return g > gen }, "a new connection")
	a.WaitOK(t, a.OK()+50, "after the heal")
	acked, fails := a.Halt()
	for _, err := range fails {
		if !errors.Is(err, natsconn.ErrDisconnected) {
			t.Errorf("append failed with %v, want an error wrapping natsconn.ErrDisconnected", err)
		}
	}
	t.Logf("%d appends acknowledged, %d failed while the connection was replaced", len(acked), len(fails))
	checkAcked(t, l, "heal", acked)

	nc2, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	checkChangedFromAnotherWriter(t, l, openLog(t, nc2, jslog.Config{}))
}

func TestOpenConn_ResumesAfterTheServerRestarts(t *testing.T) {
	dir := t.TempDir()
	srv, err := embednats.Start(embednats.Config{DataDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	u := srv.ClientURL()
	c := testenv.NATSConn(t, natsconn.URL(u))
	l := openConnLog(t, c)
	a := startAppender(l, "restart")
	a.WaitOK(t, 20, "before the restart")

	srv.Shutdown()
	testenv.Eventually(t, 10*time.Second, func() bool { return !c.Status().Connected }, "the disconnect noticed")
	start := time.Now()
	_, _, err = l.Append(ctxT(t), record("probe", 0))
	if !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Append while the server is down: %v, want natsconn.ErrDisconnected", err)
	}
	if _, err := l.Next(ctxT(t), "restart", 1); !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Next while the server is down: %v, want natsconn.ErrDisconnected", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("operations while the server is down took %s: not failing fast", d)
	}

	srv, err = embednats.Start(embednats.Config{DataDir: dir, Port: testenv.Port(t, u)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	a.WaitOK(t, a.OK()+50, "after the restart")
	acked, fails := a.Halt()
	t.Logf("%d appends acknowledged, %d failed while the server was down", len(acked), len(fails))
	checkAcked(t, l, "restart", acked)

	nc2, err := nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	checkChangedFromAnotherWriter(t, l, openLog(t, nc2, jslog.Config{}))
}
