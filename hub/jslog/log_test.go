package jslog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openLog(t *testing.T, nc *nats.Conn, cfg jslog.Config) *jslog.Log {
	t.Helper()
	l, err := jslog.Open(ctxT(t), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func record(channel string, i int) wire.Record {
	return wire.Record{
		Topic:       "https://example.org/" + channel + "/changelist.xml",
		Channel:     channel,
		ContentType: "application/xml",
		Key:         fmt.Sprintf("%s-%d", channel, i),
		Body:        []byte(fmt.Sprintf("<urlset>%s %d</urlset>", channel, i)),
	}
}

func mustAppend(t *testing.T, l *jslog.Log, rec wire.Record) uint64 {
	t.Helper()
	seq, dup, err := l.Append(ctxT(t), rec)
	if err != nil {
		t.Fatal(err)
	}
	if dup {
		t.Fatalf("append %s: unexpected duplicate", rec.Key)
	}
	return seq
}

func TestAppend_SequencesIncreaseAcrossChannels(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	var prev uint64
	for i, ch := range []string{"a", "b", "a", "c"} {
		seq := mustAppend(t, l, record(ch, i))
		if seq <= prev {
			t.Fatalf("append %d: seq %d not after %d", i, seq, prev)
		}
		prev = seq
	}
}

func TestAppend_RetryWithSameKeyIsStoredOnce(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	rec := record("a", 1)
	first := mustAppend(t, l, rec)
	mustAppend(t, l, record("a", 2))
	seq, dup, err := l.Append(ctxT(t), rec)
	if err != nil {
		t.Fatal(err)
	}
	if !dup || seq != first {
		t.Fatalf("retry: seq %d dup %v, want seq %d dup true", seq, dup, first)
	}
	_, last, err := l.Bounds(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if last != first+1 {
		t.Fatalf("last = %d, want %d: the retry was stored", last, first+1)
	}
}

func TestAppend_RefusesInvalidChannelNames(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	for _, name := range []string{"", "a b", "*", "a.>", "a..b", ".a"} {
		rec := record("x", 0)
		rec.Channel = name
		if _, _, err := l.Append(ctxT(t), rec); err == nil {
			t.Errorf("Append accepted channel %q", name)
		}
	}
}

func TestNext_ByChannelAndAny(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	ctx := ctxT(t)
	if _, err := l.Next(ctx, "", 1); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("Next on empty log: %v, want ErrNotFound", err)
	}
	a1 := mustAppend(t, l, record("a", 1))
	b1 := mustAppend(t, l, record("b", 1))
	a2 := mustAppend(t, l, record("a", 2))
	tests := []struct {
		channel string
		from    uint64
		want    uint64 // 0: ErrNotFound
	}{
		{"a", 0, a1}, {"a", a1, a1}, {"a", a1 + 1, a2}, {"a", a2 + 1, 0},
		{"b", 1, b1}, {"b", b1 + 1, 0}, {"c", 1, 0},
		{"", a1 + 1, b1}, {"", b1 + 1, a2}, {"", a2 + 1, 0},
	}
	for _, tt := range tests {
		rec, err := l.Next(ctx, tt.channel, tt.from)
		if tt.want == 0 {
			if !errors.Is(err, hub.ErrNotFound) {
				t.Errorf("Next(%q, %d) = %d, %v; want ErrNotFound", tt.channel, tt.from, rec.Seq, err)
			}
			continue
		}
		if err != nil || rec.Seq != tt.want {
			t.Errorf("Next(%q, %d) = %d, %v; want %d", tt.channel, tt.from, rec.Seq, err, tt.want)
		}
	}
	rec, err := l.Next(ctx, "a", a2)
	if err != nil {
		t.Fatal(err)
	}
	want := record("a", 2)
	if rec.Channel != "a" || rec.Key != want.Key || !bytes.Equal(rec.Body, want.Body) || rec.Topic != want.Topic {
		t.Fatalf("Next returned %+v, want %+v", rec, want)
	}
}

func TestNext_SkipsRecordsRemovedByMaxBytes(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{MaxBytes: 8 << 10})
	var seqs []uint64
	for i := range 40 {
		rec := record("a", i)
		rec.Body = bytes.Repeat([]byte{'x'}, 1000)
		seqs = append(seqs, mustAppend(t, l, rec))
	}
	ctx := ctxT(t)
	first, last, err := l.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first <= seqs[0] || last != seqs[len(seqs)-1] {
		t.Fatalf("Bounds = %d, %d; want first after %d and last %d", first, last, seqs[0], seqs[len(seqs)-1])
	}
	rec, err := l.Next(ctx, "a", seqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if rec.Seq != first {
		t.Fatalf("Next from removed %d = %d, want first held %d", seqs[0], rec.Seq, first)
	}
}

func TestNext_SkipsRecordsRemovedByMaxAge(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{MaxAge: 500 * time.Millisecond})
	old := mustAppend(t, l, record("a", 1))
	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := l.Next(ctxT(t), "a", old)
		return errors.Is(err, hub.ErrNotFound)
	}, "record %d expiring", old)
	fresh := mustAppend(t, l, record("a", 2))
	rec, err := l.Next(ctxT(t), "a", old)
	if err != nil || rec.Seq != fresh {
		t.Fatalf("Next from expired %d = %d, %v; want %d", old, rec.Seq, err, fresh)
	}
}

func TestBounds_EmptyThenFirstAndLast(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	first, last, err := l.Bounds(ctxT(t))
	if err != nil || first != 0 || last != 0 {
		t.Fatalf("empty Bounds = %d, %d, %v; want 0, 0", first, last, err)
	}
	s1 := mustAppend(t, l, record("a", 1))
	s2 := mustAppend(t, l, record("b", 2))
	testenv.Eventually(t, 5*time.Second, func() bool {
		first, last, err = l.Bounds(ctxT(t))
		return err == nil && first == s1 && last == s2
	}, "Bounds reaching %d, %d (have %d, %d)", s1, s2, first, last)
}

func TestChanged_WakesAfterAnotherWritersAppend(t *testing.T) {
	srv, nc := testenv.NATS(t)
	reader := openLog(t, nc, jslog.Config{})
	nc2, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	writer := openLog(t, nc2, jslog.Config{})

	for i := range 20 {
		changed := reader.Changed()
		seq := mustAppend(t, writer, record("a", i))
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("append %d: Changed not closed within 5s", seq)
		}
		// Woken means stored: Next must find it at once.
		rec, err := reader.Next(ctxT(t), "a", seq)
		if err != nil || rec.Seq != seq {
			t.Fatalf("after wake: Next(%d) = %d, %v", seq, rec.Seq, err)
		}
	}
}

func TestChanged_UnreadChannelsNeverBlockAppends(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	held := l.Changed()
	for i := range 200 {
		mustAppend(t, l, record("a", i))
	}
	select {
	case <-held:
	default:
		t.Fatal("channel taken before the appends is still open")
	}
	if l.Changed() == held {
		t.Fatal("Changed returned a closed channel after appends")
	}
}

func TestDecodeMsg_RoundTripsEveryHeader(t *testing.T) {
	_, nc := testenv.NATS(t)
	l := openLog(t, nc, jslog.Config{})
	loc := time.FixedZone("x", 3600)
	rec := wire.Record{
		Topic:        "https://example.org/topic?x=1#frag",
		Channel:      "arxiv",
		From:         time.Date(2024, 1, 2, 3, 4, 5, 123456789, loc),
		Until:        time.Date(2024, 1, 2, 3, 5, 0, 987654321, time.UTC),
		ContentType:  "application/xml; charset=utf-8",
		ResourceSync: "https://example.org/capabilitylist.xml",
		Received:     time.Date(2024, 1, 2, 3, 5, 1, 1, time.UTC),
		Key:          "key-1",
		Body:         []byte("<urlset/>"),
	}
	live := make(chan *nats.Msg, 1)
	sub, err := nc.ChanSubscribe(l.Subject("arxiv"), live)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	seq := mustAppend(t, l, rec)
	rec.Seq = seq

	var m *nats.Msg
	select {
	case m = <-live:
	case <-time.After(5 * time.Second):
		t.Fatal("no live message on the channel subject")
	}
	for _, h := range []string{wire.HeaderMsgID, wire.HeaderTopic, wire.HeaderChannel, wire.HeaderFrom,
		wire.HeaderUntil, wire.HeaderContentType, wire.HeaderReceived, wire.HeaderResourceSync} {
		if m.Header.Get(h) == "" {
			t.Errorf("live message lacks header %s", h)
		}
	}
	fromLive, err := jslog.DecodeMsg(m.Subject, m.Header, m.Data, seq)
	if err != nil {
		t.Fatal(err)
	}
	fromNext, err := l.Next(ctxT(t), "arxiv", seq)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]wire.Record{"live": fromLive, "Next": fromNext} {
		if err := sameRecord(got, rec); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDecodeMsg_ZeroTimesAreAbsent(t *testing.T) {
	h := jslog.EncodeHeaders(wire.Record{Channel: "a"})
	for _, name := range []string{wire.HeaderFrom, wire.HeaderUntil, wire.HeaderReceived, wire.HeaderMsgID} {
		if _, ok := h[name]; ok {
			t.Errorf("header %s present for a zero value", name)
		}
	}
	rec, err := jslog.DecodeMsg("rshub.notify.a", h, nil, 7)
	if err != nil || !rec.From.IsZero() || !rec.Until.IsZero() || rec.Seq != 7 {
		t.Fatalf("DecodeMsg = %+v, %v", rec, err)
	}
}

func TestDecodeMsg_RejectsMalformedTime(t *testing.T) {
	h := nats.Header{wire.HeaderUntil: []string{"yesterday"}}
	if _, err := jslog.DecodeMsg("rshub.notify.a", h, nil, 1); err == nil || !strings.Contains(err.Error(), wire.HeaderUntil) {
		t.Fatalf("err = %v, want one naming %s", err, wire.HeaderUntil)
	}
}

func sameRecord(got, want wire.Record) error {
	switch {
	case got.Seq != want.Seq, got.Topic != want.Topic, got.Channel != want.Channel,
		got.ContentType != want.ContentType, got.ResourceSync != want.ResourceSync, got.Key != want.Key:
		return fmt.Errorf("got %+v, want %+v", got, want)
	case !got.From.Equal(want.From), !got.Until.Equal(want.Until), !got.Received.Equal(want.Received):
		return fmt.Errorf("times: got %v %v %v, want %v %v %v", got.From, got.Until, got.Received, want.From, want.Until, want.Received)
	case !bytes.Equal(got.Body, want.Body):
		return fmt.Errorf("body %q, want %q", got.Body, want.Body)
	}
	return nil
}
