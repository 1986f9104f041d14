package natsconn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/testenv"
)

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newConn(t *testing.T, dial natsconn.DialFunc) *natsconn.Conn {
	t.Helper()
	c := testenv.NATSConn(t, dial)
	if err := c.Wait(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

// ping round-trips through the server on the current connection.
func ping(ctx context.Context, c *natsconn.Conn) error {
	return c.Do(ctx, func(_ context.Context, nc *nats.Conn, _ uint64) error { return nc.Flush() })
}

func waitHealed(t *testing.T, c *natsconn.Conn, after uint64) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool {
		st := c.Status()
		return st.Connected && st.Generation > after && ping(ctxT(t, time.Second), c) == nil
	}, "a new connection after generation %d", after)
}

func TestConn_ReplacesAConnectionSomeoneClosed(t *testing.T) {
	srv, _ := testenv.NATS(t)
	c := newConn(t, srv.Dial)
	nc, gen := c.Current()
	if gen != 1 || nc == nil || !c.Status().Connected || c.Err() != nil {
		t.Fatalf("after Wait: gen %d, status %+v, err %v", gen, c.Status(), c.Err())
	}
	changed := c.Changed()
	nc.Close()
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("Changed not closed after the connection was closed")
	}
	waitHealed(t, c, gen)
	if st := c.Status(); st.LastErr == nil {
		t.Fatalf("status after a close keeps no last error: %+v", st)
	}
}

func TestConn_ReplacesAConnectionKilledByAFatalServerError(t *testing.T) {
	srv, _ := testenv.NATS(t)
	c := newConn(t, srv.Dial)
	nc, gen := c.Current()
	// A subject longer than the server's 4 KiB control line: the server
	// answers -ERR 'maximum control line exceeded' and nats.go treats
	// that as fatal (issue 11).
	_ = nc.Publish(strings.Repeat("x", 5000), nil)
	_ = nc.Flush()
	testenv.Eventually(t, 10*time.Second, nc.IsClosed, "the server closing the connection")
	waitHealed(t, c, gen)
}

func TestDo_FailsFastWhileTheServerIsDown(t *testing.T) {
	dir := t.TempDir()
	srv, err := embednats.Start(embednats.Config{DataDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	u := srv.ClientURL()
	c := newConn(t, natsconn.URL(u))
	srv.Shutdown()
	testenv.Eventually(t, 10*time.Second, func() bool { return !c.Status().Connected }, "disconnect noticed")
	called := false
	err = c.Do(ctxT(t, 10*time.Second), func(context.Context, *nats.Conn, uint64) error {
		called = true
		return nil
	})
	if !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Do while down: %v, want ErrDisconnected", err)
	}
	if called {
		t.Fatal("Do while down called its function instead of failing at once")
	}
	if st := c.Status(); time.Since(st.Since) < 0 || st.Since.After(time.Now()) {
		t.Fatalf("Since = %v", st.Since)
	}

	srv, err = embednats.Start(embednats.Config{DataDir: dir, Port: testenv.Port(t, u)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	testenv.Eventually(t, 15*time.Second, func() bool { return ping(ctxT(t, time.Second), c) == nil }, "reconnect")
	if _, gen := c.Current(); gen != 1 {
		t.Fatalf("generation %d after nats.go reconnected the same connection", gen)
	}
}

func TestDo_ContextEndsWhenTheConnectionIsLost(t *testing.T) {
	srv, _ := testenv.NATS(t)
	c := newConn(t, srv.Dial)
	started := make(chan *nats.Conn, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- c.Do(ctxT(t, 30*time.Second), func(ctx context.Context, nc *nats.Conn, _ uint64) error {
			started <- nc
			<-ctx.Done()
			return context.Cause(ctx)
		})
	}()
	(<-started).Close()
	select {
	case err := <-errc:
		if !errors.Is(err, natsconn.ErrDisconnected) {
			t.Fatalf("Do = %v, want ErrDisconnected", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do still running 10s after its connection was closed")
	}
}

func TestFromConn_FollowsButNeverReplacesOrCloses(t *testing.T) {
	srv, nc := testenv.NATS(t)
	c := natsconn.FromConn(nc)
	if err := c.Wait(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if nc.IsClosed() {
		t.Fatal("Close closed a connection it does not own")
	}
	if err := ping(ctxT(t, time.Second), c); !errors.Is(err, natsconn.ErrClosed) {
		t.Fatalf("Do after Close: %v, want ErrClosed", err)
	}

	nc2, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	c2 := natsconn.FromConn(nc2)
	defer c2.Close()
	if err := c2.Wait(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	nc2.Close()
	testenv.Eventually(t, 5*time.Second, func() bool { return !c2.Status().Connected }, "close noticed")
	if err := ping(ctxT(t, time.Second), c2); !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Do on a closed wrapped connection: %v", err)
	}
	if _, gen := c2.Current(); gen != 1 {
		t.Fatalf("wrapped connection replaced: generation %d", gen)
	}
}

func TestConn_DialFailuresAreRetriedAndReported(t *testing.T) {
	srv, _ := testenv.NATS(t)
	boom := errors.New("boom")
	fails := make(chan struct{}, 3)
	for range 3 {
		fails <- struct{}{}
	}
	dial := func(ctx context.Context, opts ...nats.Option) (*nats.Conn, error) {
		select {
		case <-fails:
			return nil, boom
		default:
			return srv.Dial(ctx, opts...)
		}
	}
	c, err := natsconn.New(context.Background(), natsconn.Config{Dial: dial, MinRedial: time.Millisecond, MaxRedial: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Wait(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); !errors.Is(st.LastErr, boom) || st.Generation != 1 {
		t.Fatalf("status %+v, want generation 1 and the dial error kept", st)
	}
	c.Close()
	if err := c.Wait(ctxT(t, time.Second)); !errors.Is(err, natsconn.ErrClosed) {
		t.Fatalf("Wait after Close = %v", err)
	}
	if !c.Status().Closed {
		t.Fatal("Status not Closed after Close")
	}
}

func TestWait_EndsWithTheContext(t *testing.T) {
	c, err := natsconn.New(context.Background(), natsconn.Config{Dial: natsconn.URL("nats://127.0.0.1:1", nats.Timeout(100*time.Millisecond))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Wait(ctxT(t, 300*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Wait = %v, want the deadline and ErrDisconnected", err)
	}
	if _, err := natsconn.New(context.Background(), natsconn.Config{}); err == nil {
		t.Fatal("New without Dial succeeded")
	}
}
