package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/natsconn"
	"github.com/rshub/rshub/internal/testenv"
)

func openConnStore(t *testing.T, dial natsconn.DialFunc) (*natsconn.Conn, *kvstore.Store) {
	t.Helper()
	c := testenv.NATSConn(t, dial)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := kvstore.OpenConn(ctx, c, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// startWriter stores cursors in a loop and remembers which were acknowledged
// (subscription ID -> cursor sequence).
func startWriter(s *kvstore.Store) *testenv.Writer[string, uint64] {
	return testenv.StartWriter(func(ctx context.Context, i int) (string, uint64, error) {
		id := fmt.Sprintf("sub-%d", i+1)
		return id, uint64(i + 1), s.PutCursor(ctx, id, hub.Cursor{Seq: uint64(i + 1)})
	})
}

func checkWritten(t *testing.T, s *kvstore.Store, acked map[string]uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for id, seq := range acked {
		c, err := s.Cursor(ctx, id)
		if err != nil || c.Seq != seq {
			t.Fatalf("acknowledged cursor %s = %+v, %v; want seq %d", id, c, err, seq)
		}
	}
}

func TestOpenConn_HealsAfterItsConnectionIsClosed(t *testing.T) {
	srv, _ := testenv.NATS(t)
	c, s := openConnStore(t, srv.Dial)
	w := startWriter(s)
	w.WaitOK(t, 20, "before the close")
	nc, gen := c.Current()
	nc.Close()
	testenv.Eventually(t, 10*time.Second, func() bool { _, g := c.Current(); return g > gen }, "a new connection")
	w.WaitOK(t, w.OK()+50, "after the heal")
	acked, fails := w.Halt()
	for _, err := range fails {
		if !errors.Is(err, natsconn.ErrDisconnected) {
			t.Errorf("write failed with %v, want an error wrapping natsconn.ErrDisconnected", err)
		}
	}
	t.Logf("%d writes acknowledged, %d failed while the connection was replaced", len(acked), len(fails))
	checkWritten(t, s, acked)
	ctx := context.Background()
	if ok, err := s.Claim(ctx, "k", "hub-a", time.Minute); err != nil || !ok {
		t.Fatalf("Claim after the heal: %v, %v", ok, err)
	}
	if _, err := s.Subscriptions(ctx, ""); err != nil {
		t.Fatalf("Subscriptions after the heal: %v", err)
	}
}

// restartable is an embedded NATS server on a data directory of its own,
// with a store on a connection to it, that a test stops and starts again
// on the same port.
type restartable struct {
	dir, url string
	srv      *embednats.Server
	c        *natsconn.Conn
	s        *kvstore.Store
}

func newRestartable(t *testing.T) *restartable {
	t.Helper()
	r := &restartable{dir: t.TempDir()}
	var err error
	if r.srv, err = embednats.Start(embednats.Config{DataDir: r.dir, Port: -1}); err != nil {
		t.Fatal(err)
	}
	r.url = r.srv.ClientURL()
	r.c, r.s = openConnStore(t, natsconn.URL(r.url))
	return r
}

// stop shuts the server down and waits until the store's connection
// noticed.
func (r *restartable) stop(t *testing.T) {
	t.Helper()
	r.srv.Shutdown()
	testenv.Eventually(t, 10*time.Second, func() bool { return !r.c.Status().Connected }, "the disconnect noticed")
}

// start starts the server again on its data directory and port.
func (r *restartable) start(t *testing.T) {
	t.Helper()
	var err error
	if r.srv, err = embednats.Start(embednats.Config{DataDir: r.dir, Port: testenv.Port(t, r.url)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.srv.Shutdown)
}

func TestOpenConn_ResumesAfterTheServerRestarts(t *testing.T) {
	r := newRestartable(t)
	s := r.s
	w := startWriter(s)
	w.WaitOK(t, 20, "before the restart")

	r.stop(t)
	// Operations that waited for the server instead of failing fast would
	// still be waiting when this deadline ends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Ping(ctx); !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Ping while the server is down: %v, want natsconn.ErrDisconnected", err)
	}
	if _, err := s.Channels(ctx); !errors.Is(err, natsconn.ErrDisconnected) {
		t.Fatalf("Channels while the server is down: %v, want natsconn.ErrDisconnected", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("operations while the server is down failed only at their deadline (%v): not failing fast", ctx.Err())
	}

	r.start(t)
	w.WaitOK(t, w.OK()+50, "after the restart")
	acked, fails := w.Halt()
	t.Logf("%d writes acknowledged, %d failed while the server was down", len(acked), len(fails))
	checkWritten(t, s, acked)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

// The subscription feed and batched cursor writes across a restart of the
// NATS server: while it is down both fail fast (no hang, no partial
// success taken for stored); once it is back, a mark taken before the
// restart still tells a subscription written after it, and a batch of
// cursors is stored whole.
func TestFeedAndBatchedCursors_ResumeAfterTheServerRestarts(t *testing.T) {
	r := newRestartable(t)
	s := r.s
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mark, err := s.SubscriptionMark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cursors := map[string]hub.Cursor{}
	for i := range 300 {
		cursors[fmt.Sprintf("sub-%d", i)] = hub.Cursor{Seq: uint64(i + 1)}
	}

	r.stop(t)
	// Calls that waited for the server instead of failing fast would still
	// be waiting when this deadline ends.
	downCtx, cancelDown := context.WithTimeout(ctx, 20*time.Second)
	defer cancelDown()
	if _, _, err := s.SubscriptionChanges(downCtx, mark, hub.MaxFollowed); err == nil {
		t.Fatal("SubscriptionChanges answered while the server is down")
	}
	if failed := s.PutCursors(downCtx, cursors); len(failed) != len(cursors) {
		t.Fatalf("PutCursors while the server is down failed %d of %d cursors: the rest taken for stored", len(failed), len(cursors))
	}
	if downCtx.Err() != nil {
		t.Fatalf("feed and batched writes while the server is down failed only at their deadline (%v): not failing fast", downCtx.Err())
	}

	r.start(t)
	sub := hub.Subscription{ID: "after-restart", Topic: "https://t.example/", Callback: "http://127.0.0.1:9/cb", State: hub.SubActive}
	testenv.Eventually(t, 30*time.Second, func() bool { return s.PutSubscription(ctx, sub) == nil }, "a write once the server is back")
	var changes []hub.SubscriptionChange
	testenv.Eventually(t, 30*time.Second, func() bool {
		changes, _, err = s.SubscriptionChanges(ctx, mark, hub.MaxFollowed)
		return err == nil
	}, "the feed answers again")
	if len(changes) != 1 || changes[0].Sub.ID != sub.ID {
		t.Fatalf("changes since the mark taken before the restart: %+v, want the one subscription written after", changes)
	}
	if failed := s.PutCursors(ctx, cursors); len(failed) != 0 {
		t.Fatalf("PutCursors after the restart failed %d cursors: %v", len(failed), failed)
	}
	for id, want := range cursors {
		if got, err := s.Cursor(ctx, id); err != nil || got.Seq != want.Seq {
			t.Fatalf("cursor %s after the restart = %+v, %v; want seq %d", id, got, err, want.Seq)
		}
	}
}
