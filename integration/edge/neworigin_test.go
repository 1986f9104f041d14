package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testproc"
	"github.com/rshub/rshub/wire"
)

// sseLog reads one channel's Server-Sent Events at a hub as an
// EventSource does (again from the last id when a session ends) and keeps
// every event's type and id.
type sseLog struct {
	mu     sync.Mutex
	events []string // "type id"
	lastID string
}

func readEvents(t *testing.T, h *hubProc, channel string) *sseLog {
	l := &sseLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			l.session(ctx, h.url+"events?since=0&channels="+channel)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond): // the EventSource's retry
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func (l *sseLog) session(ctx context.Context, u string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	l.mu.Lock()
	if l.lastID != "" {
		req.Header.Set(wire.HeaderLastEventID, l.lastID)
	}
	l.mu.Unlock()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "id:"):
			id := strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			l.mu.Lock()
			l.events, l.lastID = append(l.events, event+" "+id), id
			l.mu.Unlock()
		}
	}
}

func (l *sseLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// The origin's data folder deleted and the origin started again under a
// running edge: the edge notices the new log, says so, and starts again
// on it: its webhook subscriber gets the new log's notifications at the
// new log's sequences, and its Server-Sent Events session a reset, then
// the new log's notifications under the new epoch, never one of them
// under the former epoch.
func TestEdge_NewOriginLogIsNoticed(t *testing.T) {
	t.Parallel()
	chans := writeChannels(t, "chA", topicA)
	origin, leaf := originWithLeaf(t, chans)
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", leaf))
	edge := edgeOf(t, origin, p)
	edge.awaitReadyz(200, "ready", 60*time.Second)
	r := newReceiver(t)
	r.subscribe(t, edge.hubProc, topicA)
	sse := readEvents(t, edge.hubProc, "chA")
	var formerSeqs []uint64
	for n := 1; n <= 6; n++ {
		formerSeqs = append(formerSeqs, publishTo(t, origin.hubProc, topicA, n))
	}
	awaitDelivered(t, r, 6, formerSeqs[5], "the former log's last notification at the edge")
	before := sse.snapshot()
	if len(before) == 0 {
		t.Fatal("no events at the edge before the origin's log was lost")
	}
	formerEpoch := epochOf(t, before[len(before)-1])

	origin.proc.Stop(t)
	if err := os.RemoveAll(origin.dir); err != nil {
		t.Fatal(err)
	}
	origin.proc.Restart(t)
	origin.awaitReadyz(200, "ready", 90*time.Second)
	// fewer than the former log held: a mirror that did not notice
	// would take none of them
	var newSeqs []uint64
	for n := 101; n <= 103; n++ {
		newSeqs = append(newSeqs, publishTo(t, origin.hubProc, topicA, n))
	}
	for i, n := range []int{101, 102, 103} {
		awaitDelivered(t, r, n, newSeqs[i], fmt.Sprintf("the new log's notification %d at the edge's webhook subscriber", n))
	}
	testproc.WaitFor(t, 60*time.Second, "the new log's notifications at the edge's events session", func() (bool, string) {
		evs := sse.snapshot()
		return len(evs) > len(before) && countNew(evs[len(before):], formerEpoch) >= 3, strings.Join(evs[len(before):], ", ")
	})
	after := sse.snapshot()[len(before):]
	reset := false
	for _, e := range after {
		typ, id, _ := strings.Cut(e, " ")
		if typ == wire.EventReset {
			reset = true
		}
		if typ == wire.EventNotification && epochOf(t, e) == formerEpoch {
			t.Errorf("a notification after the origin's log was lost under the former epoch: %s", id)
		}
	}
	if !reset {
		t.Errorf("no reset event at the edge's events session after the origin's log was lost: %v", after)
	}
	if out := edge.proc.Output(0); !strings.Contains(out, "created again") {
		t.Errorf("the edge's log does not say the origin's log was created again")
	}
	edge.awaitReadyz(200, "ready", 60*time.Second)
}

// epochOf returns the epoch of an event's id ("type epoch-seq").
func epochOf(t *testing.T, event string) string {
	t.Helper()
	_, id, _ := strings.Cut(event, " ")
	c, err := wire.ParseCursor(id)
	if err != nil {
		t.Fatalf("event id %q: %v", id, err)
	}
	return c.Epoch
}

// countNew counts the notification events not of epoch former.
func countNew(events []string, former string) int {
	n := 0
	for _, e := range events {
		typ, id, _ := strings.Cut(e, " ")
		if c, err := wire.ParseCursor(id); typ == wire.EventNotification && err == nil && c.Epoch != former {
			n++
		}
	}
	return n
}
