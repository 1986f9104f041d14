package server_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// natsHub starts a hub whose embedded NATS server listens on a free
// loopback port, with the read password "reader-secret" (and the options),
// and returns its hub URL and NATS URL.
func natsHub(t *testing.T, options ...func(*server.Config)) (hubURL, natsURL string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	pw := filepath.Join(t.TempDir(), "nats-password")
	if err := os.WriteFile(pw, []byte("reader-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := servertest.Start(t, nil, append([]func(*server.Config){func(c *server.Config) {
		c.NATSListen, c.NATSPasswordFile = addr, pw
	}}, options...)...)
	return st.HubURL, "nats://" + addr
}

// violations connects to u with opts and returns the connection and the
// permission violations the server reports to it.
func violations(t *testing.T, u string, opts ...nats.Option) (*nats.Conn, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err.Error())
	}))
	nc, err := nats.Connect(u, opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", u, err)
	}
	t.Cleanup(nc.Close)
	return nc, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// waitViolation waits until the server has refused subject.
func waitViolation(t *testing.T, seen func() []string, subject string) {
	t.Helper()
	waitViolations(t, seen, subject, 1)
}

// waitViolations waits until the server has refused subject n times.
func waitViolations(t *testing.T, seen func() []string, subject string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if countViolations(seen(), subject) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no permissions violation for %s; the server said %q", subject, seen())
}

func countViolations(seen []string, subject string) int {
	n := 0
	for _, v := range seen {
		if strings.Contains(strings.ToLower(v), "permissions violation") && strings.Contains(v, `"`+subject+`"`) {
			n++
		}
	}
	return n
}

// logState returns how many records the log holds of the channels
// "demo" and "other", and the sequence of demo's last, read as the reader
// may. (The hub appends framework notifications of its own meanwhile.)
func logState(t *testing.T, js jetstream.JetStream) (demo, other, last uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, wire.Stream)
	if err != nil {
		t.Fatalf("the reader reads the log's info: %v", err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(wire.Subject(wire.SubjectPrefix, "")))
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, wire.Subject(wire.SubjectPrefix, "demo"))
	if err != nil {
		t.Fatalf("the reader reads demo's last record: %v", err)
	}
	subj := info.State.Subjects
	return subj[wire.Subject(wire.SubjectPrefix, "demo")], subj[wire.Subject(wire.SubjectPrefix, "other")], m.Sequence
}

// A client on --nats-listen without credentials is refused; the read user
// may not publish onto the log's subjects or the key-value buckets', nor
// update, purge or delete the stream (in the API of the hub's domain
// either); the log is unchanged and the read user consumes it.
func TestNATSAccess_OutsideClientsNeverWriteTheLog(t *testing.T) {
	leafPW := filepath.Join(t.TempDir(), "leaf-password")
	if err := os.WriteFile(leafPW, []byte("leaf-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hubURL, natsURL := natsHub(t, func(c *server.Config) { c.LeafListen, c.LeafPasswordFile = "127.0.0.1:0", leafPW }) // an origin: JetStream domain rshub
	topic := strings.TrimSuffix(hubURL, "/") + wire.TopicPath("demo")
	publish(t, hubURL, topic)

	if nc, err := nats.Connect(natsURL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a client without credentials connected")
	} else if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("a client without credentials: %v, want an authorization error", err)
	}
	if nc, err := nats.Connect(natsURL, nats.UserInfo("reader", "wrong"), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a client with a wrong password connected")
	}

	nc, seen := violations(t, natsURL, nats.UserInfo("reader", "reader-secret"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	demo, other, last := logState(t, js)
	if demo != 1 || other != 0 {
		t.Fatalf("the log holds %d records of demo and %d of other, want the one published", demo, other)
	}

	for _, subj := range []string{wire.Subject(wire.SubjectPrefix, "demo"), wire.Subject(wire.SubjectPrefix, "other"), "$KV.rshub_channels.demo"} {
		if err := nc.Publish(subj, []byte("<not a notification/>")); err != nil {
			t.Fatal(err)
		}
		waitViolation(t, seen, subj)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.Publish(ctx, wire.Subject(wire.SubjectPrefix, "demo"), []byte("<x/>")); err == nil {
		t.Fatal("the reader's JetStream publish was acknowledged")
	}
	// the JetStream API, also in the hub's domain's name ($JS.rshub.API,
	// which the server maps onto $JS.API before it checks)
	for _, api := range []string{"$JS.API.", "$JS." + server.DefaultDomain + ".API."} {
		for _, op := range []string{"STREAM.PURGE.", "STREAM.DELETE.", "STREAM.UPDATE.", "STREAM.MSG.DELETE.", "STREAM.CREATE.", "STREAM.INFO.KV_", "CONSUMER.DELETE."} {
			refused := "$JS.API." + op + wire.Stream
			n := countViolations(seen(), refused)
			if err := nc.PublishRequest(api+op+wire.Stream, nc.NewRespInbox(), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			waitViolations(t, seen, refused, n+1)
		}
	}
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: wire.Stream, Subjects: []string{"x.>"}}); err == nil {
		t.Error("the reader updated the log's stream")
	}
	if _, err := nc.SubscribeSync("$KV.>"); err != nil {
		t.Fatal(err)
	}
	waitViolation(t, seen, "$KV.>")

	if d, o, l := logState(t, js); d != demo || o != 0 || l != last {
		t.Fatalf("the log changed: %d records of demo (the last at %d) and %d of other, was %d (at %d) and 0", d, l, o, demo, last)
	}
	readOne(t, js, "demo")
}

// readOne consumes channel's records with an ordered consumer and checks
// that there is one, a change notification.
func readOne(t *testing.T, js jetstream.JetStream, channel string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, wire.Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{wire.Subject(wire.SubjectPrefix, channel)}})
	if err != nil {
		t.Fatalf("the reader's consumer: %v", err)
	}
	m, err := c.Next(jetstream.FetchMaxWait(30 * time.Second))
	if err != nil {
		t.Fatalf("the reader's next message: %v", err)
	}
	if !strings.Contains(string(m.Data()), "change-notification") {
		t.Fatalf("the reader read %q, want the published notification", m.Data())
	}
	if md, err := m.Metadata(); err != nil || md.NumPending != 0 {
		t.Fatalf("the reader's message: %+v %v, want the log's only record", md, err)
	}
}

// With --nats-anonymous-read a client without credentials reads the log,
// and still never writes it.
func TestNATSAccess_AnonymousReadOnlyWhenAsked(t *testing.T) {
	hubURL, natsURL := natsHub(t, func(c *server.Config) { c.NATSAnonymousRead = true })
	publish(t, hubURL, strings.TrimSuffix(hubURL, "/")+wire.TopicPath("demo"))
	nc, seen := violations(t, natsURL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	demo, _, last := logState(t, js)
	subj := wire.Subject(wire.SubjectPrefix, "demo")
	if err := nc.Publish(subj, []byte("<x/>")); err != nil {
		t.Fatal(err)
	}
	waitViolation(t, seen, subj)
	if d, _, l := logState(t, js); d != demo || l != last {
		t.Fatalf("the log changed: %d records of demo (the last at %d), was %d (at %d)", d, l, demo, last)
	}
	readOne(t, js, "demo")
}
