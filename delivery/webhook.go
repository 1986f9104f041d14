package delivery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

// Store is the part of the hub's state store that webhook delivery uses;
// hub.Store satisfies it. Delivery reads subscriptions a shard at a time and
// writes only cursors, dead letters, its membership and shard leases (and
// deletes a subscription whose callback answered 410 Gone).
type Store interface {
	SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error)
	ShardVersions(ctx context.Context) ([]uint64, error)
	Subscription(ctx context.Context, id string) (hub.Subscription, error)
	DeleteSubscription(ctx context.Context, id string) error
	Cursor(ctx context.Context, subID string) (hub.Cursor, error)
	PutCursor(ctx context.Context, subID string, c hub.Cursor) error
	AddDeadLetter(ctx context.Context, d hub.DeadLetter) error
	DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error)
	DeleteDeadLetter(ctx context.Context, subID, id string) error
	Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, owner string) error
	Heartbeat(ctx context.Context, owner string, ttl time.Duration) ([]string, error)
}

var _ Store = hub.Store(nil)

// Config configures a Webhooks engine. Zero fields take the defaults
// named on each.
type Config struct {
	HubURL    string       // goes in Link rel="hub"
	Client    *http.Client // default netguard.NewClient with the default (global-only) policy
	Schedule  Schedule     // zero: DefaultSchedule
	SigMethod string       // sha1, sha256 (default), sha384 or sha512
	Scheme    string       // signs subscriptions that asked for no scheme: wire.SchemeWebSub (default), SchemeStandard or SchemeBoth
	// PerHost is how many concurrent requests a callback host starts
	// with (default DefaultPerHost); the limit then adapts to the host's
	// answers between PerHostMin and PerHostMax (hostadapt.go; defaults
	// DefaultPerHostMin, DefaultPerHostMax). PerHostMin = PerHostMax fixes it.
	PerHost    int
	PerHostMin int
	PerHostMax int
	// DefaultRate is the deliveries per second of a subscription that
	// asked for no rate (hub.Subscription.Rate); MaxRate caps every
	// subscription's; PerHostRate is the deliveries per second to one
	// callback host, however many subscriptions it has. 0: no limit.
	// See rate.go.
	DefaultRate float64
	MaxRate     float64
	PerHostRate float64
	Breaker     BreakerConfig
	// Reconcile is how often the engine reads the store's shard versions
	// and re-lists the subscriptions of its shards that changed (default 5s).
	Reconcile time.Duration
	// Owner is this process's identity among the hubs sharing the store
	// (shards.go). Default: host name, process id and a random suffix.
	Owner string
	// ClaimTTL bounds how long a dead hub's shards wait for another hub
	// (default 30s): shard leases last two thirds of it, renewed every sixth.
	ClaimTTL time.Duration
	// Grace is how long in-flight POSTs may finish after Run's context
	// ends (default 5s). A 2xx within it still moves the cursor.
	Grace  time.Duration
	Logger *slog.Logger // default slog.Default()
	// CursorFlush is how long, at most, a delivered cursor waits before it
	// is stored, written together with the other queues' (cursor.go;
	// default DefaultCursorFlush; negative: at once, still off the
	// delivery's path). It bounds what a crashed hub redelivers. Cursors
	// are also stored when the engine stops and before a shard is given up.
	CursorFlush time.Duration
	// Coalesce configures coalesced catch-up (coalesce_queue.go); the zero
	// value coalesces only for subscriptions that opted in.
	Coalesce CoalesceConfig
	// Observer receives every attempt's outcome, for metrics; optional.
	Observer Observer
	// Attempts receives a record of every attempt for the subscription's
	// attempt log (a *hub.AttemptLog); optional. It must not block.
	Attempts AttemptRecorder
	// Tracer makes a span of each attempt (trace.go); default a no-op
	// tracer, which still carries a record's trace context to the POST.
	Tracer trace.Tracer
	Clock  func() time.Time // default time.Now; timers still run on real time
	// logReads caps the queues' log reads in flight (readlimit.go); 0 is
	// defaultLogReads. Set by tests.
	logReads int
}

// Default settings of Config.
const (
	DefaultReconcile = 5 * time.Second
	DefaultClaimTTL  = 30 * time.Second
	DefaultGrace     = 5 * time.Second
)

// Observer receives the outcome of every delivery attempt: "delivered",
// "gone" (410), "failed" (to be retried) or "dead_letter" (given up), how long
// the POST took and, when delivered, how long after the hub received the
// notification. Implementations must not block.
type Observer interface {
	Attempted(outcome string, took, sinceReceived time.Duration)
}

type nopObserver struct{}

func (nopObserver) Attempted(string, time.Duration, time.Duration) {}

// Webhooks delivers the log's notifications to WebSub callbacks. Create
// it with NewWebhooks and start it with Run.
//
// Each active subscription whose lease has not ended has one queue that
// reads its channel from the stored cursor (or StartSeq) and delivers
// every record at least once, in log order, one at a time:
//
//   - POST to the callback exactly as given, the stored body (with only
//     the entries the subscription's Filter selects, when it has one; see
//     filter.go), the record's
//     Content-Type, one Link header (rel="self", rel="hub" and, when the
//     Source sent one, rel="resourcesync"), Rshub-Seq, and X-Hub-Signature
//     when the subscription has a secret. Redirects are not followed.
//   - A subscription to a channel's feed URL (hub.FormatAtom) receives
//     each ResourceSync change notification as an Atom document of its
//     entries instead (atom.go); other content is skipped for it.
//   - 2xx: the cursor moves to the record (sequence and until).
//   - 410 Gone: the subscription is deleted and its queue ends.
//   - Anything else (other statuses, 3xx included, timeouts, refused or
//     netguard-refused connections): retried on the Schedule; when it is
//     exhausted a dead letter is stored, and only then the cursor moves.
//     A callback URL that is not http(s) is dead-lettered at once.
//   - Coalesced catch-up (Config.Coalesce): a subscription whose channel
//     has more undelivered records than the threshold receives each run of
//     consecutive change notifications as one coalesced notification
//     covering the run's window (logcache.CoalesceLog), with Rshub-Seq the run's
//     last sequence; the cursor moves there after a 2xx.
//   - Attempts are spaced by the subscription's rate and its host's, when
//     they have one (rate.go).
//   - Attempts to one callback host share a concurrency limit that adapts
//     to its answers (PerHost, hostadapt.go) and a circuit breaker; attempts held back by an open circuit do not
//     count against the Schedule's Attempts, only its MaxElapsed.
//
// A queue runs only while this engine holds the lease of its
// subscription's shard (shards.go), so several hubs can share a store and
// split the work. Stopping never moves a cursor without a 2xx: an attempt
// cut short is made again later.
type Webhooks struct {
	log      hub.Log
	reads    *readGate // log, as the queues read it: reads in flight capped (readlimit.go)
	store    Store
	cfg      Config
	logger   *slog.Logger
	limit    *hostLimit
	breakers *breakerSet // of callback hosts
	// callbacks are the breakers of callbacks (isolate.go).
	callbacks *breakerSet
	send      sender // cfg.Client's requests (post.go)
	obs       Observer
	lastSeq   atomic.Uint64       // last sequence of the log, as last seen
	h         *loophealth.Tracker // the engine's own store and log calls that fail
	filters   filterCache         // filtered bodies, shared by the queues
	wakes     *wakeIndex          // queues by channel, woken by dispatchWakes
	leases    leaseWakes          // parked queues by the end of their lease
	kick      chan struct{}       // a shard was acquired: reconcile now; buffered 1
	index     *statsIndex         // troubled queues and counts by state
	link      atomic.Pointer[linkMemo]
	cursors   *cursorBatch // cursors delivered, stored together
	// listedVer is the store's version of each shard at its last listing;
	// Run's goroutine only.
	listedVer [hub.Shards]uint64
	follow    followState // the store's subscription writes followed (reconcile.go)

	mu     sync.Mutex
	runCtx context.Context // set while Run runs
	// runBase is runCtx's values without its cancellation, set with it
	// and kept: the parent of each queue run's context (queue.begin),
	// which Run's end cancels (cancelRuns) instead of runCtx holding them
	// all as its children.
	runBase     context.Context
	wg          sync.WaitGroup // queue goroutines
	queues      map[string]*queue
	retired     map[string]*queue           // stopped queues whose goroutine may still be finishing
	pending     map[string]hub.Subscription // activated before Run, applied when its shard is listed
	gen         uint64                      // bumped by every Activate and Deactivate
	deactivated map[string]uint64           // id → gen of its Deactivate
	toStart     []*queue                    // queues waiting for a starter (queue_start.go)
	starters    int                         // starters running
	shards      [hub.Shards]shardState
}

// NewWebhooks returns an engine reading log and store under cfg.
func NewWebhooks(log hub.Log, store Store, cfg Config) *Webhooks {
	if cfg.Client == nil {
		cfg.Client = netguard.NewClient(netguard.Policy{}, netguard.Timeouts{})
	}
	if cfg.Schedule.Initial == 0 && cfg.Schedule.Steps == nil {
		cfg.Schedule = DefaultSchedule()
	}
	if cfg.SigMethod == "" {
		cfg.SigMethod = wire.DefaultSigMethod
	}
	if cfg.Reconcile <= 0 {
		cfg.Reconcile = DefaultReconcile
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = DefaultClaimTTL
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.CursorFlush == 0 {
		cfg.CursorFlush = DefaultCursorFlush
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Tracer == nil {
		cfg.Tracer = noop.Tracer{}
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Owner == "" {
		cfg.Owner = defaultOwner()
	}
	lg := cfg.Logger.With("component", "webhooks")
	h := loophealth.New(lg)
	return &Webhooks{
		log:         log,
		reads:       newReadGate(log, cfg.logReads),
		store:       store,
		cfg:         cfg,
		logger:      lg,
		h:           h,
		cursors:     newCursorBatch(store, cfg.CursorFlush, h),
		obs:         obs,
		limit:       newHostLimit(cfg.PerHost, cfg.PerHostMin, cfg.PerHostMax, cfg.PerHostRate),
		breakers:    newBreakerSet(cfg.Breaker),
		callbacks:   newCallbackBreakers(cfg.Breaker),
		send:        newSender(cfg.Client),
		wakes:       newWakeIndex(),
		leases:      leaseWakes{base: time.Now()},
		kick:        make(chan struct{}, 1),
		index:       newStatsIndex(),
		queues:      map[string]*queue{},
		retired:     map[string]*queue{},
		pending:     map[string]hub.Subscription{},
		deactivated: map[string]uint64{},
	}
}

func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Owner returns the identity this engine claims shards with.
func (w *Webhooks) Owner() string { return w.cfg.Owner }

// Run delivers until ctx ends, then returns nil. It holds its share of
// the shards (shards.go) and, every Reconcile interval and whenever it
// takes a shard, lists the subscriptions of each held shard that changed,
// starting queues for active, unexpired ones and stopping the others. When
// it returns, every in-flight attempt has finished (within Grace) or been
// abandoned without moving its cursor, and its shards are given up.
//
// A log or store that fails (a lost connection, a restarting server) does
// not end Run: every loop retries with backoff and resumes where it was;
// Health tells whether one is stalled. Run returns an error at once only
// for a configuration it cannot work with.
func (w *Webhooks) Run(ctx context.Context) error {
	if err := w.cfg.Schedule.validate(); err != nil {
		return err
	}
	if w.cfg.HubURL == "" {
		return errors.New("delivery: Config.HubURL is required (it goes in Link rel=\"hub\")")
	}
	if !wire.ValidSigMethod(w.cfg.SigMethod) {
		return fmt.Errorf("delivery: unknown signature method %q", w.cfg.SigMethod)
	}
	w.mu.Lock()
	if w.runCtx != nil {
		w.mu.Unlock()
		return errors.New("delivery: Webhooks.Run called twice")
	}
	w.runCtx, w.runBase = ctx, context.WithoutCancel(ctx)
	stopRuns := context.AfterFunc(ctx, w.cancelRuns)
	defer stopRuns()
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		w.dispatchWakes(ctx)
	}()
	owned := make(chan struct{})
	go func() {
		defer close(owned)
		w.ownShards(ctx)
	}()
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		w.cursors.run(ctx)
	}()
	w.mu.Unlock()

	defer func() {
		<-owned // no more shards released from here on
		w.mu.Lock()
		w.runCtx = nil
		for _, q := range w.queues { // the running ones end with ctx, the parked ones now
			q.stopLocked()
		}
		for _, q := range w.retired {
			q.stopLocked()
		}
		w.mu.Unlock()
		w.wg.Wait()
		w.limit.stopRunners()
		<-dispatched
		<-flushed
		if !w.cursors.final(ctx, nil) {
			w.logger.Warn("cursors not stored; the hub taking the subscriptions over will deliver again since the last stored")
		}
		w.leave(ctx)
		w.mu.Lock()
		clear(w.queues)
		clear(w.retired)
		w.mu.Unlock()
	}()

	tick := time.NewTicker(w.cfg.Reconcile)
	defer tick.Stop()
	for {
		w.reconcile(ctx)
		var retry <-chan time.Time // a failed listing is retried at the backoff's pace
		if d := w.h.RetryIn(opList, loophealth.EngineRetry); d > 0 {
			retry = time.After(d)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-w.kick:
		case <-retry:
		}
	}
}

// Health reports whether every loop of the engine is working: false when
// its membership heartbeat, its shard claims, the subscription listing or a
// queue (reading the log, reading or storing its cursor or dead letters)
// has been failing
// since since, with the latest error of the oldest failure. Stalled loops
// retry by themselves; Health is for readiness checks and dashboards. It
// does no I/O and reads only the queues in trouble.
func (w *Webhooks) Health() (ok bool, since time.Time, err error) {
	ok, since, err = w.h.State()
	for _, q := range w.index.list() {
		qok, qsince, qerr := q.h.State()
		ok, since, err = loophealth.Worst(ok, since, err, qok, qsince, qerr)
	}
	return ok, since, err
}

// forget marks id as gone (410): a reconcile listing taken before the
// subscription was deleted must not restart it.
func (w *Webhooks) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.deactivated[id] = w.gen
}

func (w *Webhooks) noteSeq(seq uint64) {
	for {
		cur := w.lastSeq.Load()
		if seq <= cur || w.lastSeq.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// queueFor returns the running queue of id, or nil.
func (w *Webhooks) queueFor(id string) *queue {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queues[id]
}

// logChannel returns the log channel to read for sub: its channel name,
// or "" (every channel, filtered by topic) for a subscription stored
// without one.
func logChannel(sub hub.Subscription) string { return sub.Channel }

// hostOf returns the host[:port] key of a callback URL for the per-host
// limit and breaker.
func hostOf(callback string) string {
	u, err := url.Parse(callback)
	if err != nil || u.Host == "" {
		return callback
	}
	return strings.ToLower(u.Host)
}

// reached maps the outcome of a log read to the outcome of the contact
// with the log: hub.ErrNotFound is the log answering that it has nothing
// more, a contact that worked.
func reached(err error) error {
	if errors.Is(err, hub.ErrNotFound) {
		return nil
	}
	return err
}
