package jslog_test

import (
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
)

// Callers of Bounds at the same moment share one stream info request: a
// thousand queues starting at once must not send a thousand.
func TestBounds_ConcurrentCallersShareOneRequest(t *testing.T) {
	srv, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	mustAppend(t, l, record("a", 1))
	watcher, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(watcher.Close)
	sub, err := watcher.SubscribeSync("$JS.API.STREAM.INFO.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Flush(); err != nil {
		t.Fatal(err)
	}
	// requests seen so far: once nc's are processed, the watcher's flush
	// returns after their copies are queued on its subscription
	seen := func() int {
		t.Helper()
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := watcher.Flush(); err != nil {
			t.Fatal(err)
		}
		n, _, err := sub.Pending()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const callers = 200
	for round := range 3 {
		time.Sleep(jslog.BoundsCacheTTL) // the cached bounds expire: the behaviour under test
		before := seen()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if _, last, err := l.Bounds(ctxT(t)); err != nil || last == 0 {
					t.Errorf("Bounds = last %d, %v", last, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if n := seen() - before; n == 0 || n > 3 {
			t.Fatalf("round %d: %d concurrent Bounds calls sent %d stream info requests; want 1 (a few at most)", round, callers, n)
		}
	}
}

// An empty log's cached bounds do not outlive its first append: Bounds
// right after never gives a first sequence of 0 with a last one above it.
func TestBounds_FirstAppendEndsTheCachedEmptyLog(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	if first, last, err := l.Bounds(ctxT(t)); err != nil || first != 0 || last != 0 {
		t.Fatalf("empty log: Bounds = %d, %d, %v", first, last, err)
	}
	seq := mustAppend(t, l, record("a", 1))
	if first, last, err := l.Bounds(ctxT(t)); err != nil || first != seq || last != seq {
		t.Fatalf("after the first append: Bounds = %d, %d, %v; want %d, %d", first, last, err, seq, seq)
	}
}
