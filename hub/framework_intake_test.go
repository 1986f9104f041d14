package hub_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// A framework notification the hub composes is stored once through intake
// whatever the log's deduplication window: by a second hub process whose
// working state has moved past it, by a restarted one, and by two that
// race; a topic that is no framework channel's is refused with 404.
func TestPublishFramework_OnceAcrossHubsWhateverTheDuplicateWindow(t *testing.T) {
	ctx := context.Background()
	_, nc := testenv.NATS(t)
	const window = 100 * time.Millisecond // the shortest JetStream allows
	log, err := jslog.Open(ctx, nc, jslog.Config{DuplicateWindow: window})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = log.Close() })
	st, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutChannel(ctx, hub.Channel{Name: "a", Topic: "http://example.com/a/change/"}); err != nil {
		t.Fatal(err)
	}
	const hubURL = "http://127.0.0.1:1/websub"
	var published publishCounter // the hub's own notifications are not counted as publishes
	process := func() *hub.Hub {
		h, err := hub.New(hub.Config{HubURL: hubURL, Store: st, Log: log, Client: http.DefaultClient, Observer: &published, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	topic := hub.FrameworkTopic(hubURL, "a")
	note := func(loc string) hub.FrameworkNotification {
		return hub.FrameworkNotification{Topic: topic, Entries: 1, Body: []byte(fwPayload("changelist", "created") + "<!-- " + loc + " -->")}
	}
	stored := func() []wire.Record {
		var out []wire.Record
		if err := hub.Walk(ctx, log, "a-framework", 1, 1<<62, func(r wire.Record) error { out = append(out, r); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// the log no longer deduplicates what is stored before it returns
	windowPassed := func() {
		t.Helper()
		probe := wire.Record{Topic: "http://example.com/probe", Channel: "probe", Key: "probe-" + t.Name()}
		if _, _, err := log.Append(ctx, probe); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, func() bool {
			_, dup, err := log.Append(ctx, probe)
			return err == nil && !dup
		}, "the duplicate window passes")
	}

	a, b := process(), process()
	n1, n2 := note("1"), note("2")
	r1, err := a.PublishFramework(ctx, n1)
	if err != nil || r1.Duplicate {
		t.Fatalf("first publish: %+v, %v", r1, err)
	}
	if _, err := b.PublishFramework(ctx, n2); err != nil { // b's state moves past n1
		t.Fatal(err)
	}
	windowPassed()
	for i, h := range []*hub.Hub{a, b, process()} { // the first writer, the second, a restarted one
		n := n1
		n.After = r1.Seq - 1 // the caller read the log up to before n1
		res, err := h.PublishFramework(ctx, n)
		if err != nil || !res.Duplicate || res.Seq != r1.Seq {
			t.Fatalf("process %d publishing n1 again: %+v, %v; want the duplicate of %d", i, res, err, r1.Seq)
		}
	}
	if got := stored(); len(got) != 2 || got[0].Key != n1.Key() || got[1].Key != n2.Key() {
		t.Fatalf("stored %d records, want n1 and n2 once", len(got))
	}

	// two processes race the same notification after the window
	n3 := note("3")
	n3.After = r1.Seq
	windowPassed()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []*hub.Hub{process(), process()} {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = h.PublishFramework(ctx, n3) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := stored(); len(got) != 3 || got[2].Key != n3.Key() || got[2].Received.IsZero() {
		t.Fatalf("after a race: %d records, want 3 with n3 once, received by intake", len(got))
	}

	gone := note("4")
	gone.Topic = hub.FrameworkTopic(hubURL, "deleted")
	var pe *hub.PublishError
	if _, err := a.PublishFramework(ctx, gone); !errors.As(err, &pe) || pe.Status != http.StatusNotFound {
		t.Fatalf("a deleted channel's framework topic: %v, want a 404 refusal", err)
	}
	if n := published.n.Load(); n != 0 {
		t.Errorf("the observer counted %d publishes, want none: framework notifications are the hub's own", n)
	}
}

// publishCounter is a hub.Observer that counts publishes.
type publishCounter struct{ n atomic.Int64 }

func (c *publishCounter) Published(string, int, time.Duration) { c.n.Add(1) }
func (c *publishCounter) Rejected(string)                      {}
func (c *publishCounter) Verified(string, bool)                {}
func (c *publishCounter) GapRecorded(string)                   {}
func (c *publishCounter) Unstored(string)                      {}
