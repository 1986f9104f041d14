package logcache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), probeKey{}, true), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start runs c's follower until the test ends and waits until it answers
// from memory.
func start(t testing.TB, c *logcache.Cache) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	changed := c.Changed()
	go func() { done <- c.Run(ctx) }()
	select {
	case <-changed: // closed when Run is ready
	case err := <-done:
		t.Fatalf("Run returned at once: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run not ready within 10s")
	}
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func rec(channel string, i int) wire.Record {
	return wire.Record{
		Topic: "https://example.org/" + channel, Channel: channel, ContentType: "application/xml",
		Key: fmt.Sprintf("%s-%d", channel, i), Body: []byte(fmt.Sprintf("<urlset>%d</urlset>", i)),
	}
}

func waitAbsorbed(t testing.TB, c *logcache.Cache, seq uint64) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() bool { return c.Stats().Last >= seq }, "cache absorbing %d", seq)
}

func appendAll(t testing.TB, l hub.Log, channels ...string) []uint64 {
	t.Helper()
	var seqs []uint64
	for i, ch := range channels {
		seq, _, err := l.Append(ctxT(t), rec(ch, i))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

func TestNext_InsideTheRingAnswersFromMemory(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{})
	start(t, c)
	s := appendAll(t, c, "a", "b", "a", "c", "b", "a") // seqs 1..6
	waitAbsorbed(t, c, s[5])
	before := log.probes.Load()
	tests := []struct {
		channel string
		from    uint64
		want    uint64 // 0: ErrNotFound
	}{
		{"", 0, 1}, {"", 1, 1}, {"", 4, 4}, {"", 6, 6}, {"", 7, 0}, {"", 100, 0},
		{"a", 1, 1}, {"a", 2, 3}, {"a", 4, 6}, {"a", 7, 0},
		{"b", 1, 2}, {"b", 3, 5}, {"b", 6, 0},
		{"c", 1, 4}, {"c", 5, 0}, {"nope", 1, 0},
	}
	for _, tt := range tests {
		got, err := c.Next(ctxT(t), tt.channel, tt.from)
		if tt.want == 0 {
			if !errors.Is(err, hub.ErrNotFound) {
				t.Errorf("Next(%q, %d) = %d, %v; want ErrNotFound", tt.channel, tt.from, got.Seq, err)
			}
			continue
		}
		if err != nil || got.Seq != tt.want {
			t.Errorf("Next(%q, %d) = %d, %v; want %d", tt.channel, tt.from, got.Seq, err, tt.want)
		}
	}
	if n := log.probes.Load() - before; n != 0 {
		t.Fatalf("%d Next calls reached the log; want none", n)
	}
	got, _ := c.Next(ctxT(t), "c", 1)
	if want := rec("c", 3); got.Key != want.Key || !bytes.Equal(got.Body, want.Body) || got.Topic != want.Topic {
		t.Fatalf("cached record %+v, want %+v", got, want)
	}
}

func TestNext_BeforeTheRingGoesToTheLog(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{MaxRecords: 3})
	start(t, c)
	s := appendAll(t, c, "a", "b", "a", "b", "a", "b")
	waitAbsorbed(t, c, s[5])
	if st := c.Stats(); st.Records != 3 || st.First != s[3] {
		t.Fatalf("Stats = %+v; want 3 records from %d", st, s[3])
	}
	tests := []struct {
		channel   string
		from      uint64
		want      uint64
		delegated bool
	}{
		{"", 1, 1, true}, {"a", 2, 3, true}, {"b", 1, 2, true}, {"", 3, 3, true},
		{"", 4, 4, false}, {"a", 4, 5, false}, {"b", 5, 6, false},
		// b's last record before the ring is 2: from 3 on the ring has them all
		{"b", 3, 4, false}, {"a", 4, 5, false},
	}
	for _, tt := range tests {
		before := log.probes.Load()
		got, err := c.Next(ctxT(t), tt.channel, tt.from)
		if err != nil || got.Seq != tt.want {
			t.Errorf("Next(%q, %d) = %d, %v; want %d", tt.channel, tt.from, got.Seq, err, tt.want)
		}
		if d := log.probes.Load() > before; d != tt.delegated {
			t.Errorf("Next(%q, %d): reached the log = %v, want %v", tt.channel, tt.from, d, tt.delegated)
		}
	}
}

func TestEvict_KeepsRecordsAndBytesWithinBounds(t *testing.T) {
	const maxBytes = 10 * (logcache.RecordOverhead + 1100)
	log := newMemLog()
	c := logcache.New(log, logcache.Config{MaxRecords: 100, MaxBytes: maxBytes})
	start(t, c)
	var last uint64
	for i := range 50 {
		r := rec([]string{"a", "b", "c"}[i%3], i)
		r.Body = bytes.Repeat([]byte{'x'}, 1000)
		seq, _, err := c.Append(ctxT(t), r)
		if err != nil {
			t.Fatal(err)
		}
		last = seq
	}
	waitAbsorbed(t, c, last)
	st := c.Stats()
	if st.Bytes > maxBytes || st.Records < 5 || st.Records > 10 {
		t.Fatalf("Stats = %+v; want at most %d bytes and 5..10 records", st, maxBytes)
	}
	if st.First != last-uint64(st.Records)+1 {
		t.Fatalf("First = %d with %d records up to %d", st.First, st.Records, last)
	}
	for _, ch := range []string{"a", "b", "c"} {
		got, err := c.Next(ctxT(t), ch, st.First)
		if err != nil || got.Seq < st.First || got.Channel != ch {
			t.Errorf("Next(%q, %d) = %+v, %v", ch, st.First, got, err)
		}
	}
}

func TestEvict_OversizedRecordLeavesTheRingEmpty(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{MaxBytes: 2000})
	start(t, c)
	r := rec("a", 1)
	r.Body = bytes.Repeat([]byte{'x'}, 5000)
	seq, _, err := c.Append(ctxT(t), r)
	if err != nil {
		t.Fatal(err)
	}
	waitAbsorbed(t, c, seq)
	if st := c.Stats(); st.Records != 0 || st.Bytes != 0 || st.First != seq+1 {
		t.Fatalf("Stats = %+v; want an empty ring starting after %d", st, seq)
	}
	got, err := c.Next(ctxT(t), "a", seq)
	if err != nil || got.Seq != seq {
		t.Fatalf("Next(%d) = %d, %v; want it from the log", seq, got.Seq, err)
	}
}

func TestPreload_LoadsTheNewestRecords(t *testing.T) {
	log := newMemLog()
	appendAll(t, log, "a", "b", "a", "b", "a", "b", "a", "b", "a", "b")
	log.removeThrough(2)
	tests := []struct {
		preload   int
		wantFirst uint64
		wantRecs  int
	}{{0, 11, 0}, {4, 7, 4}, {50, 3, 8}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.preload), func(t *testing.T) {
			c := logcache.New(log, logcache.Config{Preload: tt.preload, MaxRecords: 20})
			start(t, c)
			if st := c.Stats(); st.First != tt.wantFirst || st.Records != tt.wantRecs || st.Last != 10 {
				t.Fatalf("Stats = %+v; want first %d, %d records, last 10", st, tt.wantFirst, tt.wantRecs)
			}
			before := log.probes.Load()
			if got, err := c.Next(ctxT(t), "b", tt.wantFirst); tt.wantRecs > 0 && (err != nil || got.Seq < tt.wantFirst) {
				t.Fatalf("Next(b, %d) = %d, %v", tt.wantFirst, got.Seq, err)
			}
			if n := log.probes.Load() - before; n != 0 {
				t.Fatalf("%d calls reached the log", n)
			}
		})
	}
}

func TestChanged_ClosedOnceTheCacheHoldsTheRecord(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{})
	start(t, c)
	for i := range 20 {
		changed := c.Changed()
		seq, _, err := log.Append(ctxT(t), rec("a", i)) // another writer, not through the cache
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("Changed not closed within 10s after %d", seq)
		}
		before := log.probes.Load()
		got, err := c.Next(ctxT(t), "a", seq)
		if err != nil || got.Seq != seq {
			t.Fatalf("after wake: Next(%d) = %d, %v", seq, got.Seq, err)
		}
		if log.probes.Load() != before {
			t.Fatal("woken reader had to ask the log")
		}
	}
}

// quietLog loses every change signal.
type quietLog struct{ *memLog }

func (q quietLog) Append(_ context.Context, r wire.Record) (uint64, bool, error) {
	return q.appendQuiet(r), false, nil
}

func TestAppend_WriterReadsItsOwnWriteBeforeTheFollowerDoes(t *testing.T) {
	log := newMemLog()
	c := logcache.New(quietLog{log}, logcache.Config{Poll: time.Hour})
	start(t, c)
	seq, _, err := c.Append(ctxT(t), rec("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	if c.Stats().Last >= seq {
		t.Skip("follower absorbed the record already")
	}
	got, err := c.Next(ctxT(t), "a", 1)
	if err != nil || got.Seq != seq {
		t.Fatalf("Next = %d, %v; want own write %d", got.Seq, err, seq)
	}
}

func TestRun_PollsWhenTheSignalIsLost(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{Poll: 20 * time.Millisecond})
	start(t, c)
	seq := log.appendQuiet(rec("a", 1))
	waitAbsorbed(t, c, seq)
}

func TestRun_RetriesAfterLogErrors(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{})
	start(t, c)
	log.fail.Store(true)
	seq, _, _ := log.Append(ctxT(t), rec("a", 1))
	testenv.Eventually(t, 10*time.Second, func() bool { return log.nexts.Load() >= 2 }, "follower retrying")
	log.fail.Store(false)
	waitAbsorbed(t, c, seq)
}

func TestRun_StoppedCachePassesThrough(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{})
	stop := start(t, c)
	s := appendAll(t, c, "a")
	waitAbsorbed(t, c, s[0])
	held := c.Changed()
	stop()
	select {
	case <-held:
	default:
		t.Fatal("waiters of Changed not woken when Run returned")
	}
	if st := c.Stats(); st.Records != 0 {
		t.Fatalf("stopped cache holds %d records", st.Records)
	}
	before := log.probes.Load()
	if got, err := c.Next(ctxT(t), "a", 1); err != nil || got.Seq != s[0] || log.probes.Load() == before {
		t.Fatalf("Next after stop = %d, %v; want %d from the log", got.Seq, err, s[0])
	}
	if err := c.Run(ctxT(t)); err == nil {
		t.Fatal("second Run succeeded")
	}
}

func TestNext_QuietChannelBeforeTheRingAnswersFromMemory(t *testing.T) {
	log := newMemLog()
	early := appendAll(t, log, "quiet", "busy") // before the follower starts: never seen by it
	c := logcache.New(log, logcache.Config{MaxRecords: 4})
	start(t, c)
	s := appendAll(t, c, "quiet", "busy", "busy", "busy", "busy", "busy", "busy", "quiet")
	waitAbsorbed(t, c, s[7])
	if st := c.Stats(); st.First != s[4] {
		t.Fatalf("ring starts at %d, want %d", st.First, s[4])
	}
	tests := []struct {
		from      uint64
		want      uint64
		delegated bool
	}{
		{early[0], early[0], true}, // before the follower: the log must answer
		{s[0], s[0], true},         // quiet's record s[0] left the ring
		{s[0] + 1, s[7], false},    // nothing of quiet between s[0] and the ring
		{s[4], s[7], false},
	}
	for _, tt := range tests {
		before := log.probes.Load()
		got, err := c.Next(ctxT(t), "quiet", tt.from)
		if err != nil || got.Seq != tt.want {
			t.Errorf("Next(quiet, %d) = %d, %v; want %d", tt.from, got.Seq, err, tt.want)
		}
		if d := log.probes.Load() > before; d != tt.delegated {
			t.Errorf("Next(quiet, %d): reached the log = %v, want %v", tt.from, d, tt.delegated)
		}
	}
	// a channel the follower never saw, asked from after its start: nothing
	before := log.probes.Load()
	if _, err := c.Next(ctxT(t), "never", s[0]); !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("Next(never) = %v, want ErrNotFound", err)
	}
	if log.probes.Load() != before {
		t.Error("Next(never) after the follower's start reached the log")
	}
}

// A follow read that is never answered (made while the stream had no
// leader) is cut once the log takes an append while it brings nothing, and
// asked again: the cache does not wait for the read's own end, which here
// never comes.
func TestRun_UnansweredReadIsAskedAgainAfterAnAppend(t *testing.T) {
	log := newMemLog()
	c := logcache.New(log, logcache.Config{})
	start(t, c)
	log.hang.Store(true)
	appendAll(t, log, "a")
	testenv.Eventually(t, 10*time.Second, func() bool { return !log.hang.Load() }, "the follower's read reaching the log")
	seqs := appendAll(t, log, "b")
	waitAbsorbed(t, c, seqs[0])
	if ok, _, err := c.Health(); !ok {
		t.Errorf("health after the read was asked again: %v", err)
	}
}
