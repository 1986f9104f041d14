package delivery

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// wait is the deadline of every awaited condition in these tests: long,
// since it only ends a failing test, and the tests run several at once
// (main_test.go) on machines that may be busy with other work; 20 s
// was met by a condition of milliseconds on an idle machine only 9 times
// in 10 at load 15.
const wait = 60 * time.Second

const testHubURL = "http://127.0.0.1:1/hub"

// env is a real log and store on an embedded NATS server.
type env struct {
	t     testing.TB
	log   *jslog.Log
	store *kvstore.Store
	clock *testenv.Clock
	names map[string]string // topic → channel name
	nc    *nats.Conn        // to sharedNATS
	ns    envNames
}

func newEnv(t testing.TB) *env {
	t.Helper()
	nc, err := sharedNATS.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	names := newEnvNames(t)
	ctx := context.Background()
	t.Cleanup(func() { // after the engine's own cleanup, registered later
		js, err := jetstream.New(nc)
		if err == nil {
			err = names.deleteStreams(ctx, js)
		}
		if err != nil {
			t.Errorf("env cleanup: %v", err)
		}
	})
	lg, err := jslog.Open(ctx, nc, jslog.Config{Stream: names.stream, SubjectPrefix: names.subjectPrefix})
	if err != nil {
		t.Fatal(err)
	}
	st, err := kvstore.Open(ctx, nc, kvstore.Config{Prefix: names.storePrefix})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, log: lg, store: st, clock: &testenv.Clock{}, names: map[string]string{}, nc: nc, ns: names}
}

// storeConfig is the kvstore.Config of e's store, for a second store on
// the same buckets.
func (e *env) storeConfig() kvstore.Config { return kvstore.Config{Prefix: e.ns.storePrefix} }

func (e *env) ctx() context.Context { return context.Background() }
func loopbackPolicy(t testing.TB) netguard.Policy {
	p, err := netguard.ParsePolicy([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// channel creates a channel named name for topic.
func (e *env) channel(topic, name string) {
	e.t.Helper()
	e.names[topic] = name
	if err := e.store.PutChannel(e.ctx(), hub.Channel{Topic: topic, Name: name, Trust: hub.TrustOpen, Created: time.Now()}); err != nil {
		e.t.Fatal(err)
	}
}

// subscribe stores an active subscription with a lease of an hour.
func (e *env) subscribe(topic, callback, secret string) hub.Subscription {
	e.t.Helper()
	now := e.clock.Now()
	s := hub.Subscription{
		ID: hub.SubscriptionID(topic, callback), Topic: topic, Channel: e.names[topic], Callback: callback, Secret: secret,
		Lease: 3600, Expires: now.Add(time.Hour), State: hub.SubActive, Created: now, Verified: now, StartSeq: 1,
	}
	if err := e.store.PutSubscription(e.ctx(), s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// publish appends n notifications to the channel and returns their
// sequences. Bodies are "<name>-<i>".
func (e *env) publish(topic, name string, from, n int) []uint64 {
	e.t.Helper()
	var seqs []uint64
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		rec := wire.Record{
			Topic: topic, Channel: name, ContentType: "application/xml",
			From: base.Add(time.Duration(i) * time.Second), Until: base.Add(time.Duration(i+1) * time.Second),
			Key: fmt.Sprintf("%s-%d", name, i), Body: fmt.Appendf(nil, "%s-%d", name, i),
		}
		seq, _, err := e.log.Append(e.ctx(), rec)
		if err != nil {
			e.t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

// fastConfig is a Config for tests: loopback allowed, millisecond retries.
func (e *env) fastConfig() Config {
	return Config{
		HubURL:    testHubURL,
		Client:    netguard.NewClient(loopbackPolicy(e.t), netguard.Timeouts{Request: 10 * time.Second}),
		Schedule:  Schedule{Initial: time.Millisecond, Max: 5 * time.Millisecond, Multiplier: 2, Attempts: 4},
		Breaker:   BreakerConfig{Failures: -1, CallbackFailures: -1},
		Reconcile: 50 * time.Millisecond,
		ClaimTTL:  30 * time.Second, // renewed every 5 s, each claim given as long: a busy machine lets no lease lapse
		Grace:     time.Second,
		// Cursors stored within 10 ms, not the default second: most tests
		// wait for a stored cursor.
		CursorFlush: 10 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock:       e.clock.Now,
	}
}

// start runs an engine until the returned stop is called (or the test ends).
func (e *env) start(cfg Config) (*Webhooks, func()) { return e.startOn(e.log, cfg) }

// startOn is start with the engine reading log.
func (e *env) startOn(log hub.Log, cfg Config) (*Webhooks, func()) { return e.run(log, e.store, cfg) }

// startWith is start with the engine using store.
func (e *env) startWith(store Store, cfg Config) (*Webhooks, func()) { return e.run(e.log, store, cfg) }

// run runs an engine on log and store until the returned stop is called
// (or the test ends).
func (e *env) run(log hub.Log, store Store, cfg Config) (*Webhooks, func()) {
	w := NewWebhooks(log, store, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("Run: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	return w, stop
}

// cursor returns the stored cursor of sub (zero when none).
func (e *env) cursor(id string) hub.Cursor {
	c, _ := e.store.Cursor(e.ctx(), id)
	return c
}

func (e *env) deadLetters(id string) []hub.DeadLetter {
	e.t.Helper()
	d, err := e.store.DeadLetters(e.ctx(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// delivery is one request a receiver got.
type delivery struct {
	Body   string
	Header http.Header
	Path   string
	Query  string
	At     time.Time // when it arrived
}

// receiver is a callback endpoint on loopback that records requests and
// answers with respond (200 when nil).
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []delivery
	respond func(n int, d delivery) int // n counts requests from 1
}

func newReceiver(t testing.TB, respond func(n int, d delivery) int) *receiver {
	r := &receiver{respond: respond}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivery{Body: string(body), Header: req.Header.Clone(), Path: req.URL.Path, Query: req.URL.RawQuery, At: time.Now()}
		if req.Method != http.MethodPost {
			d.Body = "METHOD " + req.Method
		}
		r.mu.Lock()
		r.got = append(r.got, d)
		n := len(r.got)
		respond := r.respond
		r.mu.Unlock()
		code := http.StatusOK
		if respond != nil {
			code = respond(n, d)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, "ignored body "+strconv.Itoa(code))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url(pathAndQuery string) string { return r.srv.URL + pathAndQuery }

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func (r *receiver) all() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) setRespond(f func(n int, d delivery) int) {
	r.mu.Lock()
	r.respond = f
	r.mu.Unlock()
}

// bodies returns the bodies answered 2xx, in arrival order.
func (r *receiver) bodies() []string {
	var out []string
	for _, d := range r.all() {
		out = append(out, d.Body)
	}
	return out
}

// statsOf returns the engine's stats of id, and whether it has a queue.
func statsOf(w *Webhooks, id string) (SubStats, bool) {
	for _, s := range w.Stats() {
		if s.ID == id {
			return s, true
		}
	}
	return SubStats{}, false
}

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
