package pull_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

var errOutage = errors.New("test: connection to the server lost")

// outage is a switch shared by decorators of the log and the channel
// lister: while it is on, their calls fail, as calls to a NATS server or a
// store that went away do; a range read under way fails at its next record.
type outage struct {
	on      atomic.Bool
	refused atomic.Int64
}

func (o *outage) fail() error {
	if o.on.Load() {
		o.refused.Add(1)
		return errOutage
	}
	return nil
}

func (o *outage) wrap(l pull.RangeLog, c pull.ChannelLister) (pull.RangeLog, pull.ChannelLister) {
	return &flakyLog{RangeLog: l.(pull.HeaderRangeLog), o: o}, &flakyLister{c: c, o: o}
}

type flakyLog struct {
	pull.RangeLog
	o *outage
}

var _ pull.HeaderRangeLog = (*flakyLog)(nil)

func (l *flakyLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	if err := l.o.fail(); err != nil {
		return wire.Record{}, err
	}
	return l.RangeLog.Next(ctx, channel, seq)
}

func (l *flakyLog) Bounds(ctx context.Context) (uint64, uint64, error) {
	if err := l.o.fail(); err != nil {
		return 0, 0, err
	}
	return l.RangeLog.Bounds(ctx)
}

func (l *flakyLog) Range(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	return l.ranged(ctx, channel, from, to, fn, l.RangeLog.Range)
}

func (l *flakyLog) RangeHeaders(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	return l.ranged(ctx, channel, from, to, fn, l.RangeLog.(pull.HeaderRangeLog).RangeHeaders)
}

func (l *flakyLog) ranged(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error,
	read func(context.Context, string, uint64, uint64, func(wire.Record) error) error) error {
	if err := l.o.fail(); err != nil {
		return err
	}
	return read(ctx, channel, from, to, func(r wire.Record) error {
		if err := l.o.fail(); err != nil {
			return err
		}
		return fn(r)
	})
}

type flakyLister struct {
	c pull.ChannelLister
	o *outage
}

func (f *flakyLister) Channels(ctx context.Context) ([]hub.Channel, error) {
	if err := f.o.fail(); err != nil {
		return nil, err
	}
	return f.c.Channels(ctx)
}

// TestPull_LogAndStoreOutageServesEveryEntryAfterwards cuts pull mode off
// from the log and the channel list while notifications keep being
// appended (by another hub, through the real log) and Run follows them:
// documents that need the log answer 503 with Retry-After meanwhile, Run
// does not return and reports the stall in Health, and once the log is back
// a client following links finds every notified entry, in order, in lists
// rotated as if nothing had happened.
func TestPull_LogAndStoreOutageServesEveryEntryAfterwards(t *testing.T) {
	o := &outage{}
	rot := changefeed.Rotation{MaxEntries: 7}
	e := newEnvWith(t, pull.Config{Rotation: rot, Listing: changefeed.Listing{IndexSize: 2, PageSize: 3}}, o.wrap, "a", "b")
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- e.pull.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })

	var wantA, wantB []string
	at := t0
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			until := at.Add(10 * time.Minute)
			es := entries(at, until, 3, i)
			e.notify("a", at, until, es)
			for _, en := range es {
				wantA = append(wantA, entryKey(en))
			}
			if i%3 == 0 {
				bs := entries(at, until, 2, 1000+i)
				e.notify("b", at, until, bs)
				for _, en := range bs {
					wantB = append(wantB, entryKey(en))
				}
			}
			at = until
		}
	}
	publish(0, 10)
	e.checkCrawl(t, "a", wantA, rot)
	var closedURL string
	for _, u := range e.crawl("a").urls {
		if strings.Contains(u, "/changelist/") && closedURL == "" {
			closedURL = u // the first list, closed: rendered and cached by now
		}
	}

	o.on.Store(true)
	publish(10, 25)
	testenv.Eventually(t, 10*time.Second, func() bool {
		ok, _, err := e.pull.Health()
		return !ok && errors.Is(err, errOutage)
	}, "pull mode stalled")
	resp, body := e.get("GET", e.base+"/channels/a/changelist.xml")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("open Change List during the outage: %s, Retry-After %q: %s", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := e.get("GET", closedURL); resp.StatusCode != http.StatusOK {
		t.Errorf("closed Change List %s during the outage: %s: %s; want it served from memory", closedURL, resp.Status, body)
	}
	select {
	case err := <-ran:
		t.Fatalf("Run returned during the outage: %v", err)
	default:
	}
	o.on.Store(false)
	publish(25, 35)
	testenv.Eventually(t, 10*time.Second, func() bool { ok, _, _ := e.pull.Health(); return ok }, "pull mode healthy again")
	e.checkCrawl(t, "a", wantA, rot)
	e.checkCrawl(t, "b", wantB, rot)
	t.Logf("outage refused %d calls", o.refused.Load())
}

// TestPull_ListStreamedFromAFailingLogAnswers503: without the rendered-list
// cache a closed Change List is read from the log for every GET; while the
// log fails the answer is 503 with Retry-After, not a 500 or a truncated
// document, and the same URL works again afterwards.
func TestPull_ListStreamedFromAFailingLogAnswers503(t *testing.T) {
	o := &outage{}
	rot := changefeed.Rotation{MaxEntries: 4}
	e := newEnvWith(t, pull.Config{Rotation: rot, CacheBytes: -1}, o.wrap, "a")
	at := t0
	for i := range 6 {
		until := at.Add(time.Minute)
		e.notify("a", at, until, entries(at, until, 3, i))
		at = until
	}
	var closedURL string
	for _, u := range e.crawl("a").urls {
		if strings.Contains(u, "/changelist/") && closedURL == "" {
			closedURL = u
		}
	}
	o.on.Store(true)
	resp, body := e.get("GET", closedURL)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "the log cannot be read") || resp.Header.Get("Retry-After") == "" || resp.Header.Get("ETag") != "" {
		t.Errorf("closed list from a failing log: %s, Retry-After %q, ETag %q: %s", resp.Status, resp.Header.Get("Retry-After"), resp.Header.Get("ETag"), body)
	}
	o.on.Store(false)
	if _, resp := e.doc(closedURL); resp.StatusCode != http.StatusOK {
		t.Errorf("after the outage: %s", resp.Status)
	}
}
