package logcache_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

var errOutage = errors.New("test: connection to the server lost")

// flakyLog is a hub.Log whose reads fail while down is set, or once allow
// reaches zero (allow < 0: no limit), as a log behind a lost connection
// does. Changed goes through.
type flakyLog struct {
	hub.Log
	down    atomic.Bool
	allow   atomic.Int64
	refused atomic.Int64
}

func newFlakyLog(l hub.Log) *flakyLog {
	f := &flakyLog{Log: l}
	f.allow.Store(-1)
	return f
}

func (l *flakyLog) fail() error {
	if l.down.Load() || l.allow.Load() == 0 {
		l.refused.Add(1)
		return errOutage
	}
	if l.allow.Load() > 0 {
		l.allow.Add(-1)
	}
	return nil
}

func (l *flakyLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	if err := l.fail(); err != nil {
		return wire.Record{}, err
	}
	return l.Log.Next(ctx, channel, seq)
}

func (l *flakyLog) Bounds(ctx context.Context) (uint64, uint64, error) {
	if err := l.fail(); err != nil {
		return 0, 0, err
	}
	return l.Log.Bounds(ctx)
}

// followThrough is follow for a reader that outlives an outage: a failed
// read is tried again after the next change or a short pause.
func followThrough(ctx context.Context, l hub.Log, cursor uint64, n int) ([]uint64, error) {
	var got []uint64
	for len(got) < n {
		changed := l.Changed()
		rec, err := l.Next(ctx, "", cursor+1)
		if err != nil {
			t := time.NewTimer(20 * time.Millisecond) // retry pacing, not synchronisation
			select {
			case <-changed:
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return got, ctx.Err()
			}
			t.Stop()
			continue
		}
		got = append(got, rec.Seq)
		cursor = rec.Seq
	}
	return got, nil
}

// TestRun_LogOutageUnderLoadCatchesUp cuts the cache off from the real
// JetStream log while records keep being appended (by another writer) and
// readers, some behind the ring, keep following it: Run does not return,
// logs the outage once and its end once, reports it in Health, and once the
// log is back absorbs everything; every reader gets every record once, in
// order.
func TestRun_LogOutageUnderLoadCatchesUp(t *testing.T) {
	const total, readers = 300, 8
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jl, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer jl.Close()
	fl := newFlakyLog(jl)
	logs := &testenv.Buffer{}
	c := logcache.New(fl, logcache.Config{MaxRecords: 32, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	start(t, c)
	_, base, err := jl.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	results := make([][]uint64, readers)
	errs := make([]error, readers)
	for i := range readers {
		wg.Go(func() { results[i], errs[i] = followThrough(ctx, c, base, total) })
	}
	var appended []uint64
	for i := range total {
		if i == total/3 {
			fl.down.Store(true)
		}
		if fl.down.Load() && i >= 2*total/3 {
			testenv.Eventually(t, 10*time.Second, func() bool {
				ok, since, err := c.Health()
				return !ok && err != nil && time.Since(since) > 200*time.Millisecond
			}, "follower stalled")
			fl.down.Store(false)
		}
		seq, _, err := jl.Append(ctx, rec("a", i))
		if err != nil {
			t.Fatal(err)
		}
		appended = append(appended, seq)
		time.Sleep(time.Millisecond) // pacing the load, not synchronisation
	}
	waitAbsorbed(t, c, appended[len(appended)-1])
	wg.Wait()
	for i := range readers {
		if errs[i] != nil || !slices.Equal(results[i], appended) {
			t.Fatalf("reader %d: %d records (%v), want the %d appended, in order", i, len(results[i]), errs[i], len(appended))
		}
	}
	if ok, _, err := c.Health(); !ok {
		t.Errorf("Health after the outage: %v", err)
	}
	out := logs.String()
	if n, m := strings.Count(out, "following the log failed"), strings.Count(out, "following the log works again"); n != 1 || m != 1 {
		t.Errorf("outage logged %d times and its end %d times, want once each (%d calls refused):\n%s", n, m, fl.refused.Load(), out)
	}
}

// TestRun_StartFailingMidwayGoesOnWhereItStopped: a preload cut short by
// the log failing resumes after the last record it loaded, so the ring
// holds each record once.
func TestRun_StartFailingMidwayGoesOnWhereItStopped(t *testing.T) {
	log := newMemLog()
	for i := range 100 {
		if _, _, err := log.Append(ctxT(t), rec("a", i)); err != nil {
			t.Fatal(err)
		}
	}
	fl := newFlakyLog(log)
	fl.allow.Store(11) // Bounds, then 10 records of the preload
	c := logcache.New(fl, logcache.Config{Preload: 50, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(t, 10*time.Second, func() bool { return fl.refused.Load() >= 2 }, "start failing")
	if st := c.Stats(); st.Last != 60 {
		t.Fatalf("before the failure the cache loaded up to %d, want 60", st.Last)
	}
	fl.allow.Store(-1)
	waitAbsorbed(t, c, 100)
	if st := c.Stats(); st.Records != 50 || st.First != 51 {
		t.Fatalf("cache holds %d records from %d, want 50 from 51", st.Records, st.First)
	}
	for seq := uint64(51); seq <= 100; seq++ {
		r, err := c.Next(ctxT(t), "", seq)
		if err != nil || r.Seq != seq {
			t.Fatalf("Next(%d) = %d, %v", seq, r.Seq, err)
		}
	}
}
