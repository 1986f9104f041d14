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

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

// Store is the part of the hub's state store that webhook delivery uses;
// hub.Store satisfies it. Delivery reads subscriptions and channels and
// writes only cursors, dead letters and ownership claims (and deletes a
// subscription whose callback answered 410 Gone).
type Store interface {
	Subscriptions(ctx context.Context, topic string) ([]hub.Subscription, error)
	Subscription(ctx context.Context, id string) (hub.Subscription, error)
	DeleteSubscription(ctx context.Context, id string) error
	Cursor(ctx context.Context, subID string) (hub.Cursor, error)
	PutCursor(ctx context.Context, subID string, c hub.Cursor) error
	AddDeadLetter(ctx context.Context, d hub.DeadLetter) error
	DeadLetters(ctx context.Context, subID string) ([]hub.DeadLetter, error)
	DeleteDeadLetter(ctx context.Context, subID, id string) error
	Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, owner string) error
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
	PerHost   int          // max concurrent requests per callback host (default DefaultPerHost)
	Breaker   BreakerConfig
	Reconcile time.Duration // how often subscriptions are re-listed from the store (default 5s)
	// Owner is this process's identity for ownership claims; each
	// subscription's queue runs only while Claim("deliver/"+id, Owner,
	// ClaimTTL) holds. Default: host name, process id and a random suffix.
	Owner    string
	ClaimTTL time.Duration // lease of an ownership claim (default 30s), renewed every third of it
	// Grace is how long in-flight POSTs may finish after Run's context
	// ends (default 5s). A 2xx within it still moves the cursor.
	Grace  time.Duration
	Logger *slog.Logger // default slog.Default()
	// CursorFlush is how often, at most, a busy subscription's cursor is
	// stored (default DefaultCursorFlush; negative: after every delivery). A
	// cursor is also stored whenever its queue catches up or stops.
	CursorFlush time.Duration
	// Coalesce configures coalesced catch-up (coalesce_queue.go); the zero
	// value coalesces only for subscriptions that opted in.
	Coalesce CoalesceConfig
	// Observer receives every attempt's outcome, for metrics; optional.
	Observer Observer
	Clock    func() time.Time // default time.Now; timers still run on real time
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
//     covering the run's window (CoalesceLog), with Rshub-Seq the run's
//     last sequence; the cursor moves there after a 2xx.
//   - Attempts to one callback host share a concurrency limit (PerHost)
//     and a circuit breaker; attempts held back by an open circuit do not
//     count against the Schedule's Attempts, only its MaxElapsed.
//
// A queue runs only while this engine holds the store claim
// "deliver/<id>", so several hubs can share a store. Stopping never moves
// a cursor without a 2xx: an attempt cut short is made again later.
type Webhooks struct {
	log      hub.Log
	store    Store
	cfg      Config
	logger   *slog.Logger
	limit    *hostLimit
	breakers *breakerSet
	obs      Observer
	lastSeq  atomic.Uint64       // last sequence of the log, as last seen
	h        *loophealth.Tracker // the engine's own store and log calls that fail
	filters  filterCache         // filtered bodies, shared by the queues
	wakes    *wakeIndex          // queues by channel, woken by dispatchWakes

	mu          sync.Mutex
	runCtx      context.Context // set while Run runs
	wg          sync.WaitGroup  // queue goroutines
	queues      map[string]*queue
	retired     map[string]*queue           // stopped queues whose goroutine may still be finishing
	pending     map[string]hub.Subscription // activated before Run
	gen         uint64                      // bumped by every Activate and Deactivate
	deactivated map[string]uint64           // id → gen of its Deactivate
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
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Owner == "" {
		cfg.Owner = defaultOwner()
	}
	lg := cfg.Logger.With("component", "webhooks")
	return &Webhooks{
		log:         log,
		store:       store,
		cfg:         cfg,
		logger:      lg,
		h:           loophealth.New(lg),
		obs:         obs,
		limit:       newHostLimit(cfg.PerHost),
		breakers:    newBreakerSet(cfg.Breaker),
		wakes:       newWakeIndex(),
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

// Owner returns the identity this engine claims subscriptions with.
func (w *Webhooks) Owner() string { return w.cfg.Owner }

// Run delivers until ctx ends, then returns nil. It re-lists subscriptions
// from the store every Reconcile interval, starting queues for active,
// unexpired ones and stopping the others. When it returns, every in-flight
// attempt has finished (within Grace) or been abandoned without moving its
// cursor.
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
	w.runCtx = ctx
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		w.dispatchWakes(ctx)
	}()
	now := w.cfg.Clock()
	for _, s := range w.pending {
		if deliverable(s, now) {
			w.startLocked(s)
		}
	}
	clear(w.pending)
	w.mu.Unlock()

	defer func() {
		w.mu.Lock()
		w.runCtx = nil
		w.mu.Unlock()
		w.wg.Wait()
		<-dispatched
		w.mu.Lock()
		clear(w.queues)
		clear(w.retired)
		w.mu.Unlock()
	}()

	tick := time.NewTicker(w.cfg.Reconcile)
	defer tick.Stop()
	for {
		w.reconcile(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Activate starts delivering to sub without waiting for the next
// reconcile, or updates a running queue (a renewed lease, a new secret).
// The hub calls it right after verifying a subscription. Subscriptions
// that are not active or whose lease has ended are ignored.
func (w *Webhooks) Activate(sub hub.Subscription) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	delete(w.deactivated, sub.ID)
	if w.runCtx == nil {
		w.pending[sub.ID] = sub
		return
	}
	if !deliverable(sub, w.cfg.Clock()) {
		return
	}
	if q := w.queues[sub.ID]; q != nil {
		q.setSub(sub, w.gen)
		return
	}
	w.startLocked(sub)
}

// Deactivate stops delivering to the subscription id. An attempt in flight
// is abandoned and its notification will be delivered again if the
// subscription comes back.
func (w *Webhooks) Deactivate(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	w.deactivated[id] = w.gen
	delete(w.pending, id)
	if q := w.queues[id]; q != nil {
		w.retireLocked(q)
	}
}

// deliverable reports whether s should have a running queue at now.
func deliverable(s hub.Subscription, now time.Time) bool {
	return s.State == hub.SubActive && !expired(s, now)
}

func expired(s hub.Subscription, now time.Time) bool {
	return !s.Expires.IsZero() && !now.Before(s.Expires)
}

// startLocked starts sub's queue; w.mu is held and Run is running. When
// an earlier queue of the same subscription is still finishing (an attempt
// in its grace period), the new one waits for it, so that two queues never
// deliver or move the cursor of one subscription at once.
func (w *Webhooks) startLocked(sub hub.Subscription) {
	ctx, cancel := context.WithCancel(w.runCtx)
	q := newQueue(w, sub, w.gen, cancel)
	prev := w.retired[sub.ID]
	delete(w.retired, sub.ID)
	w.queues[sub.ID] = q
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(q.done)
		defer cancel()
		defer w.wakes.unwatch(q)
		if prev != nil {
			<-prev.done // ends within Grace once cancelled
		}
		if ctx.Err() == nil {
			q.run(ctx)
		}
		w.mu.Lock()
		if w.queues[sub.ID] == q {
			delete(w.queues, sub.ID)
		}
		if w.retired[sub.ID] == q {
			delete(w.retired, sub.ID)
		}
		w.mu.Unlock()
	}()
}

// retireLocked stops q; w.mu is held.
func (w *Webhooks) retireLocked(q *queue) {
	q.cancel()
	delete(w.queues, q.id)
	w.retired[q.id] = q
}

// reconcile lists the subscriptions and brings the set of queues in line.
// Changes made by Activate or Deactivate after the listing was taken win
// over the listing.
func (w *Webhooks) reconcile(ctx context.Context) {
	w.mu.Lock()
	g := w.gen
	w.mu.Unlock()

	subs, err := w.store.Subscriptions(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			w.h.Fail(opList, err) // the next tick retries; running queues go on
		}
		return
	}
	w.h.OK(opList)
	if _, last, err := w.log.Bounds(ctx); err == nil {
		w.noteSeq(last)
	}
	now := w.cfg.Clock()

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runCtx == nil || w.runCtx.Err() != nil {
		return
	}
	seen := make(map[string]bool, len(subs))
	for _, s := range subs {
		seen[s.ID] = true
		if w.deactivated[s.ID] > g {
			continue
		}
		q := w.queues[s.ID]
		switch {
		case deliverable(s, now) && q == nil:
			w.startLocked(s)
		case deliverable(s, now) && q.gen <= g:
			q.setSub(s, q.gen)
		case !deliverable(s, now) && q != nil && q.gen <= g:
			w.retireLocked(q)
		}
	}
	for id, q := range w.queues {
		if !seen[id] && q.gen <= g {
			w.retireLocked(q)
		}
	}
	for id, dg := range w.deactivated {
		if dg <= g {
			delete(w.deactivated, id)
		}
	}
	hosts := make(map[string]bool, len(w.queues))
	for _, q := range w.queues {
		hosts[q.host] = true
	}
	w.breakers.prune(hosts)
}

// opList is the engine's listing of subscriptions, followed by its health.
const opList = "listing subscriptions"

// Health reports whether every loop of the engine is working: false when
// the subscription listing or a queue (claiming its subscription, reading
// the log, reading or storing its cursor or dead letters) has been failing
// since since, with the latest error of the oldest failure. Stalled loops
// retry by themselves; Health is for readiness checks and dashboards. It
// does no I/O.
func (w *Webhooks) Health() (ok bool, since time.Time, err error) {
	ok, since, err = w.h.State()
	w.mu.Lock()
	qs := make([]*queue, 0, len(w.queues))
	for _, q := range w.queues {
		qs = append(qs, q)
	}
	w.mu.Unlock()
	for _, q := range qs {
		qok, qsince, qerr := q.h.State()
		ok, since, err = worst(ok, since, err, qok, qsince, qerr)
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

// worst combines the health of several loops: stalled when any is, since
// the earliest stall.
func worst(ok bool, since time.Time, err error, ok2 bool, since2 time.Time, err2 error) (bool, time.Time, error) {
	if ok2 || (!ok && since.Before(since2)) {
		return ok, since, err
	}
	return ok2, since2, err2
}
