package jslog_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// TestNATS_Transport checks, with plain nats.go clients and package wire's
// scheme, that the log is a NATS transport: live on a core subscription, replay from a sequence and
// from a time with an ordered JetStream consumer, and headers that decode
// into the stored record. It runs against the embedded server and against
// an external nats-server process on a loopback TCP port.
func TestNATS_Transport(t *testing.T) {
	servers := map[string]func(t *testing.T) string{
		"embedded": embeddedTCP,
		"external": externalNATS,
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			url := start(t)
			writer := connectTCP(t, url) // the hub's connection
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := jslog.Open(ctx, writer, jslog.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			t.Run("LiveOnCoreSubscription", func(t *testing.T) { natsLive(t, ctx, l, connectTCP(t, url)) })
			t.Run("ReplayFromSequence", func(t *testing.T) { natsReplaySeq(t, ctx, l, connectTCP(t, url)) })
			t.Run("ReplayFromTime", func(t *testing.T) { natsReplayTime(t, ctx, l, connectTCP(t, url)) })
		})
	}
}

// transportTimeout bounds each wait for a message.
const transportTimeout = 20 * time.Second

// natsStart says where consumerFor starts: Seq, else Time, else new
// messages only.
type natsStart struct {
	Seq  uint64
	Time time.Time
}

// consumerFor creates an ordered JetStream consumer on stream (wire.Stream
// when empty) delivering the messages on subject in log order from start,
// as any consumer of the hub's NATS interface does.
func consumerFor(ctx context.Context, js jetstream.JetStream, stream, subject string, start natsStart) (jetstream.Consumer, error) {
	if stream == "" {
		stream = wire.Stream
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverNewPolicy}
	switch {
	case start.Seq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, start.Seq
	case !start.Time.IsZero():
		t := start.Time
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	c, err := js.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("consumer on %s %s: %w", stream, subject, err)
	}
	return c, nil
}

// decodeJS turns a message of the log into its record with package wire
// alone, as a client does.
func decodeJS(m jetstream.Msg) (wire.Record, error) {
	md, err := m.Metadata()
	if err != nil {
		return wire.Record{}, fmt.Errorf("metadata: %w", err)
	}
	return wire.DecodeRecord(m.Subject(), wire.Header(m.Headers()), m.Data(), md.Sequence.Stream)
}

func natsLive(t *testing.T, ctx context.Context, l *jslog.Log, nc *nats.Conn) {
	msgs := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(wire.Subject("", "live"), msgs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	want := hubtest.Record("live", 1)
	want.ResourceSync = "http://example.com/capabilitylist.xml"
	want.Received = time.Date(2025, 5, 6, 7, 8, 9, 10, time.UTC)
	if _, _, err := l.Append(ctx, hubtest.Record("other", 1)); err != nil {
		t.Fatal(err)
	}
	seq, _, err := l.Append(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		got, err := jslog.DecodeMsg(m.Subject, m.Header, m.Data, seq) // core NATS carries no sequence
		if err != nil {
			t.Fatal(err)
		}
		want.Seq = seq
		if err := sameStored(got, want); err != nil {
			t.Fatal(err)
		}
	case <-time.After(transportTimeout):
		t.Fatal("no live message")
	}
	select {
	case m := <-msgs:
		t.Fatalf("unexpected message on %s", m.Subject)
	default:
	}
}

// appendMixed appends n records alternating between channels x and y and
// returns them with their sequences.
func appendMixed(t *testing.T, ctx context.Context, l *jslog.Log, x, y string, n int) []wire.Record {
	var out []wire.Record
	for i := range n {
		ch := x
		if i%2 == 1 {
			ch = y
		}
		rec := hubtest.Record(ch, i+1)
		seq, _, err := l.Append(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		rec.Seq = seq
		out = append(out, rec)
	}
	return out
}

// messages iterates over c's messages until the test ends.
func messages(t *testing.T, c jetstream.Consumer) jetstream.MessagesContext {
	t.Helper()
	it, err := c.Messages()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(it.Stop)
	return it
}

// consume reads n records from it with plain nats.go calls.
func consume(t *testing.T, it jetstream.MessagesContext, n int) []wire.Record {
	t.Helper()
	var out []wire.Record
	for len(out) < n {
		m, err := it.Next(jetstream.NextMaxWait(transportTimeout))
		if err != nil {
			t.Fatalf("after %d records: %v", len(out), err)
		}
		rec, err := decodeJS(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

func natsReplaySeq(t *testing.T, ctx context.Context, l *jslog.Log, nc *nats.Conn) {
	recs := appendMixed(t, ctx, l, "rx", "ry", 10)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	from := recs[4].Seq // an rx record
	c, err := consumerFor(ctx, js, "", wire.Subject("", "rx"), natsStart{Seq: from})
	if err != nil {
		t.Fatal(err)
	}
	var want []wire.Record
	for _, r := range recs {
		if r.Channel == "rx" && r.Seq >= from {
			want = append(want, r)
		}
	}
	it := messages(t, c)
	got := consume(t, it, len(want))
	for i := range want {
		if err := sameStored(got[i], want[i]); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	// Then it follows live.
	more := appendMixed(t, ctx, l, "rx", "ry", 1)
	if next := consume(t, it, 1); next[0].Seq != more[0].Seq {
		t.Fatalf("live after replay: %d, want %d", next[0].Seq, more[0].Seq)
	}
}

func natsReplayTime(t *testing.T, ctx context.Context, l *jslog.Log, nc *nats.Conn) {
	appendMixed(t, ctx, l, "tx", "ty", 4)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The stream stamps messages with the server's clock: take the
	// boundary from the stream itself, the stored time of the next record.
	later := appendMixed(t, ctx, l, "tx", "ty", 6)
	st, err := js.Stream(ctx, wire.Stream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetMsg(ctx, later[0].Seq)
	if err != nil {
		t.Fatal(err)
	}
	c, err := consumerFor(ctx, js, "", wire.Subject("", ""), natsStart{Time: raw.Time})
	if err != nil {
		t.Fatal(err)
	}
	got := consume(t, messages(t, c), len(later))
	for i := range later {
		if err := sameStored(got[i], later[i]); err != nil {
			t.Fatalf("from time %v, record %d: %v", raw.Time, i, err)
		}
	}
}

func sameStored(got, want wire.Record) error {
	switch {
	case got.Seq != want.Seq, got.Topic != want.Topic, got.Channel != want.Channel, got.Key != want.Key,
		got.ContentType != want.ContentType, got.ResourceSync != want.ResourceSync:
		return fmt.Errorf("got %+v, want %+v", got, want)
	case !got.From.Equal(want.From), !got.Until.Equal(want.Until),
		!want.Received.IsZero() && !got.Received.Equal(want.Received):
		return fmt.Errorf("times: got %v %v %v, want %v %v %v", got.From, got.Until, got.Received, want.From, want.Until, want.Received)
	case !bytes.Equal(got.Body, want.Body):
		return fmt.Errorf("body differs")
	}
	return nil
}

func connectTCP(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// embeddedTCP starts the embedded server on a random loopback TCP port.
func embeddedTCP(t *testing.T) string {
	srv, err := embednats.Start(embednats.Config{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}

// externalNATS builds nats-server from the module cache, runs it with
// JetStream on a free loopback port and returns its URL.
func externalNATS(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a nats-server process")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "nats-server")
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build nats-server with")
	}
	build := exec.Command(gobin, "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build nats-server: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-js", "-sd", filepath.Join(dir, "js"), "-p", fmt.Sprint(port), "-a", "127.0.0.1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	testenv.Eventually(t, transportTimeout, func() bool {
		select {
		case <-exited:
			t.Fatalf("nats-server exited:\n%s", out.String())
		default:
		}
		nc, err := nats.Connect(url, nats.Timeout(time.Second))
		if err != nil {
			return false
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return false
		}
		_, err = js.AccountInfo(context.Background())
		return err == nil
	}, "nats-server on %s answering with JetStream", url)
	return url
}
