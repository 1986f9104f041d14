package embednats

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startWithAccess starts a server listening on a random loopback port with
// a, and returns it with a JetStream handle of the hub's own connection.
func startWithAccess(t *testing.T, a *Access, cfg Config) (*Server, jetstream.JetStream) {
	t.Helper()
	cfg.DataDir, cfg.Port, cfg.Access = t.TempDir(), -1, a
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect()
	if err != nil {
		t.Fatalf("the hub's own connection: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return s, js
}

func testAccess() *Access {
	return &Access{Stream: "RSHUB", SubjectPrefix: "rshub.notify", ReadPassword: "read-pw", LeafPassword: "leaf-pw"}
}

// The hub's own user connects in process only: its password over TCP is
// refused, as are the leaf user's and no credentials at all.
func TestAccess_HubUserInProcessOnly(t *testing.T) {
	a := testAccess()
	s, _ := startWithAccess(t, a, Config{})
	for name, opt := range map[string]nats.Option{
		"hub user":       nats.UserInfo(HubUser, a.HubPassword),
		"leaf user":      nats.UserInfo(LeafUser, a.LeafPassword),
		"no credentials": func(*nats.Options) error { return nil },
		"wrong password": nats.UserInfo(DefaultReadUser, "nope"),
	} {
		if nc, err := nats.Connect(s.ClientURL(), opt, nats.MaxReconnects(0)); err == nil {
			nc.Close()
			t.Errorf("%s connected over TCP", name)
		}
	}
	if nc, err := nats.Connect(s.ClientURL(), nats.UserInfo(DefaultReadUser, "read-pw")); err != nil {
		t.Errorf("the read user: %v", err)
	} else {
		nc.Close()
	}
}

// A reader's push consumer delivering the log to a key-value bucket's
// subject or to the JetStream API writes nothing there: consumers deliver
// only where someone subscribes, and a reader may subscribe to neither.
func TestAccess_ReaderPushConsumerWritesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, js := startWithAccess(t, testAccess(), Config{})
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RSHUB", Subjects: []string{"rshub.notify.>"}}); err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "rshub_channels"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "rshub.notify.a", []byte("<urlset/>")); err != nil {
		t.Fatal(err)
	}
	rc, err := nats.Connect(s.ClientURL(), nats.UserInfo(DefaultReadUser, "read-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rjs, err := jetstream.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	evil := []string{"$KV.rshub_channels.evil", "$JS.API.STREAM.PURGE.RSHUB", "$JS.API.STREAM.DELETE.KV_rshub_channels"}
	var names []string
	for _, subj := range evil {
		for _, ack := range []jetstream.AckPolicy{jetstream.AckNonePolicy, jetstream.AckExplicitPolicy} {
			c, err := rjs.CreateConsumer(ctx, "RSHUB", jetstream.ConsumerConfig{DeliverSubject: subj, AckPolicy: ack})
			if err != nil {
				continue // refused: fine
			}
			names = append(names, c.CachedInfo().Name)
		}
	}
	// a push consumer of the reader's own inbox delivers: the server is
	// delivering push consumers
	inbox := rc.NewInbox()
	sub, err := rc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rjs.CreateConsumer(ctx, "RSHUB", jetstream.ConsumerConfig{DeliverSubject: inbox, AckPolicy: jetstream.AckNonePolicy}); err != nil {
		t.Fatalf("the reader's push consumer: %v", err)
	}
	if _, err := sub.NextMsg(30 * time.Second); err != nil {
		t.Fatalf("the reader's push consumer delivered nothing: %v", err)
	}
	st, err := js.Stream(ctx, "RSHUB")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	list := st.ListConsumers(ctx)
	for info := range list.Info() {
		if slices.Contains(names, info.Name) {
			seen++
			if info.Delivered.Stream != 0 {
				t.Errorf("consumer %s delivered to %s", info.Name, info.Config.DeliverSubject)
			}
		}
	}
	if err := list.Err(); err != nil || seen != len(names) {
		t.Fatalf("listed %d of the %d consumers: %v", seen, len(names), err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.State.Msgs != 1 {
		t.Fatalf("the log: %+v %v, want its one message", info, err)
	}
	if _, err := kv.Get(ctx, "evil"); err == nil {
		t.Fatal("the reader wrote a key")
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An edge links with the leaf password, and not without it.
func TestAccess_LeafLinkNeedsThePassword(t *testing.T) {
	logs := &syncBuffer{}
	origin, _ := startWithAccess(t, testAccess(), Config{Domain: "origin", LeafListen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelError}))})
	bad := &Access{Stream: "RSHUB", SubjectPrefix: "rshub.notify", LeafPassword: "wrong"}
	edge, _ := startWithAccess(t, bad, Config{Domain: "edge", LeafRemote: origin.LeafURL()})
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), "authentication error"); {
		if time.Now().After(deadline) {
			t.Fatalf("no authentication error at the origin; its log:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval with a deadline
	}
	if n := edge.LeafNodes(); n != 0 {
		t.Fatalf("an edge with the wrong password linked (%d)", n)
	}
	good, _ := startWithAccess(t, &Access{Stream: "RSHUB", SubjectPrefix: "rshub.notify", LeafPassword: "leaf-pw"}, Config{Domain: "edge2", LeafRemote: origin.LeafURL()})
	for deadline := time.Now().Add(30 * time.Second); good.LeafNodes() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the edge with the password did not link within 30s")
		}
		time.Sleep(10 * time.Millisecond) // poll interval with a deadline
	}
}

// The read user consumes the log as JetStream clients do: a durable pull
// consumer with acknowledgements (confirmed by the server), a push
// consumer with flow control, a message by sequence.
func TestAccess_ReaderConsumesWithAcksAndFlowControl(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, js := startWithAccess(t, testAccess(), Config{})
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RSHUB", Subjects: []string{"rshub.notify.>"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "rshub.notify.a", []byte("<urlset/>")); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := nats.Connect(s.ClientURL(), nats.UserInfo(DefaultReadUser, "read-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rjs, err := jetstream.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rjs.CreateOrUpdateConsumer(ctx, "RSHUB", jetstream.ConsumerConfig{Durable: "pipeline", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("the reader's durable consumer: %v", err)
	}
	batch, err := c.Fetch(3, jetstream.FetchMaxWait(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("the reader's acknowledgement: %v", err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("fetched %d messages, want 3", n)
	}
	// a push consumer with flow control and heartbeats (nats.go's legacy API answers flow control itself)
	legacy, err := rc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{}, 3)
	sub, err := legacy.Subscribe("rshub.notify.a", func(*nats.Msg) { got <- struct{}{} }, nats.BindStream("RSHUB"), nats.EnableFlowControl(), nats.IdleHeartbeat(time.Second), nats.AckNone(), nats.DeliverAll())
	if err != nil {
		t.Fatalf("the reader's push consumer: %v", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	for range 3 {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatal("the push consumer delivered fewer than 3 messages")
		}
	}
	st, err := rjs.Stream(ctx, "RSHUB")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := st.GetMsg(ctx, 2); err != nil || string(m.Data) != "<urlset/>" {
		t.Fatalf("message 2: %v %v", m, err)
	}
}
