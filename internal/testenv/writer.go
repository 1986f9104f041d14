package testenv

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/natsconn"
)

// Writer calls one write again and again, from one goroutine, until halted,
// and keeps every write that was acknowledged (its key and value) and every
// error. Outage tests start one, break a dependency, and check afterwards
// that nothing acknowledged was lost.
type Writer[K comparable, V any] struct {
	mu    sync.Mutex
	acked map[K]V
	fails []error
	stop  chan struct{}
	done  chan struct{}
}

// StartWriter runs write(ctx, i) for i = 0, 1, 2, … each bounded to 5 s,
// about a millisecond apart (ten after a failure, so a failing dependency is
// not spun on).
func StartWriter[K comparable, V any](write func(ctx context.Context, i int) (K, V, error)) *Writer[K, V] {
	w := &Writer[K, V]{acked: map[K]V{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			k, v, err := write(ctx, i)
			cancel()
			w.mu.Lock()
			if err != nil {
				w.fails = append(w.fails, err)
			} else {
				w.acked[k] = v
			}
			w.mu.Unlock()
			pause := time.Millisecond
			if err != nil {
				pause = 10 * time.Millisecond
			}
			select {
			case <-w.stop:
				return
			case <-time.After(pause): // pacing, not synchronisation
			}
		}
	}()
	return w
}

// OK is the number of acknowledged writes so far.
func (w *Writer[K, V]) OK() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// WaitOK fails the test unless at least n writes are acknowledged within 20 s.
func (w *Writer[K, V]) WaitOK(t testing.TB, n int, what string) {
	t.Helper()
	Eventually(t, 20*time.Second, func() bool { return w.OK() >= n }, "%d acknowledged writes %s", n, what)
}

// Halt stops the writer and returns what was acknowledged and what failed.
func (w *Writer[K, V]) Halt() (map[K]V, []error) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked, w.fails
}

// NATSConn is a natsconn.Conn that dials again quickly (outage tests wait
// on its heal), closed when the test ends.
func NATSConn(t testing.TB, dial natsconn.DialFunc) *natsconn.Conn {
	t.Helper()
	c, err := natsconn.New(context.Background(), natsconn.Config{Dial: dial,
		ReconnectWait: 20 * time.Millisecond, MinRedial: 10 * time.Millisecond, MaxRedial: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Port is the port of a server URL such as nats://127.0.0.1:4222, so a test
// can start a server again where it was.
func Port(t testing.TB, u string) int {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p.Port())
	if err != nil {
		t.Fatalf("port of %q: %v", u, err)
	}
	return n
}
