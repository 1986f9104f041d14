package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/rshub/rshub/access"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Activator is told when a subscription starts or stops receiving
// notifications. The webhook delivery engine implements it.
type Activator interface {
	Activate(s Subscription)
	Deactivate(id string)
}

// Config configures a Hub. HubURL, Store and Log are required.
type Config struct {
	// HubURL is the hub's public URL, exactly as it appears in rel="hub".
	HubURL string
	Store  Store
	Log    Log
	// Client makes verification-of-intent requests and topic fetches. It
	// should refuse non-global addresses and never follow redirects
	// (internal/netguard); http.DefaultClient is NOT a safe choice.
	Client *http.Client
	// Leases bounds granted leases; zero means defaultLeasePolicy.
	Leases LeasePolicy
	// MaxBody limits publish bodies and fetched topics (default 10 MiB).
	MaxBody int64
	// AllowOverlap accepts notifications that overlap or precede the
	// channel's last until instead of refusing them with 409.
	AllowOverlap bool
	// MaxClockSkew is how far ahead of the hub's clock a notification's
	// from, until or change times may lie (a Source's clock may run a
	// little fast); later ones are refused, since they would become the
	// channel's continuity anchor. Zero means defaultMaxClockSkew (5 min).
	MaxClockSkew time.Duration
	// OpenTopics lets a subscription or a thin ping name a topic the hub
	// does not know: an open channel is created for it (a public hub).
	OpenTopics bool
	// OpenElsewhere, when set, creates the channel of a topic OpenTopics
	// opens outside Store, whose channels are then read only (an edge
	// hub's, a mirror of its origin's): it returns once Store has the
	// channel, or an error wrapping ErrNotFound when it will not have it
	// (the origin does not open the topic), and the hub answers as for a
	// topic it does not serve.
	OpenElsewhere func(ctx context.Context, topic string) error
	// MercureOrigin is the origin (scheme and authority) of the URLs that
	// stand for Mercure topics that are no URL (wire.MercureTopicURL): the
	// hub URL's when empty. An edge hub gives its origin hub's, whose
	// channels it serves, so a raw topic names one channel on both.
	MercureOrigin string
	// MaxOpenChannels bounds how many channels OpenTopics may create; every
	// per-channel structure of the hub is bounded with it. Zero means
	// DefaultMaxOpenChannels. Channels an operator creates are not counted
	// against it.
	MaxOpenChannels int
	// MaxSubscriptions and MaxSubscriptionsPerHost bound, with OpenTopics,
	// the subscriptions the store holds in all and per callback host (see
	// sublimit.go). Zero means DefaultMaxSubscriptions and
	// DefaultMaxSubscriptionsPerHost.
	MaxSubscriptions        int
	MaxSubscriptionsPerHost int
	// MaxChannelStates bounds the channels whose working state and cached
	// definition the hub keeps in memory (see evict.go): beyond it, and
	// after channelIdle without a publish, the least recently used are
	// dropped and loaded again from the store and the log when next used.
	// Zero means DefaultMaxChannelStates.
	MaxChannelStates int
	// CallbackCheck, when set, refuses a subscription's callback at request
	// time with the reason (for example an address the delivery dialler
	// would refuse); the dialler still checks every connection.
	CallbackCheck func(ctx context.Context, callback string) error
	// Activator connects the delivery engine; optional.
	Activator Activator
	// Home is extra text for people who open the hub URL in a browser
	// (for example where the dashboard is); optional.
	Home string
	// VerifyWorkers bounds concurrent verifications (default 32).
	VerifyWorkers int
	// StoreRetry is how long, on the clock Now, the store write of a
	// verified subscribe or unsubscribe request is retried before the hub
	// gives up and denies the subscribe (subscribe_store.go). Zero means
	// DefaultStoreRetry (30 s).
	StoreRetry time.Duration
	// Subscribers and Publishers verify the tokens of private channels'
	// readers and publishers (package access); nil verifies none, so a
	// private channel is then served to no one and takes publishes only
	// with its own token.
	Subscribers, Publishers *access.Verifier
	// CookieOrigins are the origins, besides the hub's own, whose pages may
	// send a request to the hub URL that the mercureAuthorization cookie
	// authorises (--ws-origins; "*" is not one: see door.go).
	CookieOrigins []string
	// Observer receives intake and subscription events (metrics); optional.
	Observer Observer
	// Tracer makes the intake spans (trace.go); default a no-op tracer,
	// which still carries a Source's trace context into the log.
	Tracer trace.Tracer
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Hub is the WebSub hub: it takes subscriptions and publishes, stores
// notifications in the Log and keeps state in the Store.
type Hub struct {
	cfg    Config
	hubURL *url.URL
	// originURL is the hub URL's scheme and authority, normalised
	// (wire.NormalizeURL): where the paths of the wire layout start.
	originURL string
	// mercureOrigin is Config.MercureOrigin normalised, else originURL.
	mercureOrigin string
	logger        *slog.Logger // the slog logger; the notification log is cfg.Log
	verifyq       chan verifyJob
	obs           Observer
	denials       sync.WaitGroup // denials sent in the background, joined by Run

	mu        sync.Mutex
	chanLocks keyedLocks[lockKey]      // serialises intake per channel, see chanlock.go
	subLocks  keyedLocks[string]       // serialises changes per subscription, see lockSub
	states    map[string]*memState     // working channel states, see state.go; bounded, see evict.go
	dirty     map[string]struct{}      // topics of states changed since their last flush
	chanCache map[string]cachedChannel // channel definitions, see chancache.go
	names     nameIndex                // stored channels by name, see channels.go
	fetched   map[string]fetchMemo
	topicOK   map[string]time.Time // verified topics and when the check expires
	swept     time.Time            // when idle channels were last looked for (evict.go)
	trimming  bool                 // states went over the bound and are not yet down to 7/8 of it (evict.go)

	chanVer chanVersion // the store's channels version, see chancache.go

	openMu      sync.Mutex // serialises channel creation by OpenTopics
	openCount   int        // channels in the store, as last counted
	openCounted time.Time  // when openCount was listed

	subLimits subLimits // subscriptions counted for the limits, see sublimit.go
	sweep     *sweepState
}

// New validates cfg and returns a Hub. Call Run to start its background work.
func New(cfg Config) (*Hub, error) {
	if cfg.Store == nil || cfg.Log == nil {
		return nil, errors.New("hub: Store and Log are required")
	}
	u, err := url.Parse(cfg.HubURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("hub: hub URL %q must be an absolute http(s) URL", cfg.HubURL)
	}
	if cfg.Leases == (LeasePolicy{}) {
		cfg.Leases = defaultLeasePolicy()
	}
	if err := cfg.Leases.Validate(); err != nil {
		return nil, fmt.Errorf("hub: %w", err)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 10 << 20
	}
	if cfg.MaxSubscriptions <= 0 {
		cfg.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if cfg.MaxSubscriptionsPerHost <= 0 {
		cfg.MaxSubscriptionsPerHost = DefaultMaxSubscriptionsPerHost
	}
	if cfg.MaxOpenChannels <= 0 {
		cfg.MaxOpenChannels = DefaultMaxOpenChannels
	}
	if cfg.MaxChannelStates <= 0 {
		cfg.MaxChannelStates = DefaultMaxChannelStates
	}
	if cfg.Tracer == nil {
		cfg.Tracer = noop.Tracer{}
	}
	if cfg.VerifyWorkers <= 0 {
		cfg.VerifyWorkers = 32
	}
	if cfg.Client == nil {
		return nil, errors.New("hub: Client is required (use netguard.NewClient)")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	return &Hub{
		cfg:           cfg,
		hubURL:        u,
		originURL:     originOf(cfg.HubURL),
		mercureOrigin: originOf(cmp.Or(cfg.MercureOrigin, cfg.HubURL)),
		logger:        cfg.Logger,
		obs:           obs,
		verifyq:       make(chan verifyJob, 4096),
		states:        map[string]*memState{},
		dirty:         map[string]struct{}{},
		chanCache:     map[string]cachedChannel{},
		fetched:       map[string]fetchMemo{},
		topicOK:       map[string]time.Time{},
		sweep:         newSweepState(cfg.Activator),
	}, nil
}

// URL returns the hub URL as configured.
func (h *Hub) URL() string { return h.cfg.HubURL }

// Now returns the hub's clock reading.
func (h *Hub) Now() time.Time { return h.cfg.Now() }

// MaxClockSkew returns how far ahead of the hub's clock a notification's
// times, or a continuity anchor, may lie.
func (h *Hub) MaxClockSkew() time.Duration { return h.maxClockSkew() }

// DeleteChannel removes ch from the store and forgets what the hub cached
// of it.
func (h *Hub) DeleteChannel(ctx context.Context, ch Channel) error {
	if err := h.cfg.Store.DeleteChannel(ctx, ch.Topic); err != nil {
		return err
	}
	h.forgetChannel(ch.Topic) // after the store: a lookup meanwhile cannot cache it again
	h.names.remove(ch.Topic)
	h.forgetAll(ctx, ch.Topic)
	return nil
}

// DenySubscription ends s: it is removed from the store, its delivery
// stops, and the subscriber is told with hub.mode=denied and reason in the
// background (WebSub §5.2: a hub may deny a subscription at any time),
// which Run waits for before it returns.
func (h *Hub) DenySubscription(ctx context.Context, s Subscription, reason string) error {
	unlock, err := h.lockSub(ctx, s.ID)
	if err != nil {
		return err
	}
	defer unlock()
	if err := h.cfg.Store.DeleteSubscription(ctx, s.ID); err != nil {
		return err
	}
	if h.cfg.Activator != nil {
		h.cfg.Activator.Deactivate(s.ID)
	}
	h.denials.Go(func() { h.deny(context.WithoutCancel(ctx), s.Callback, s.Topic, reason) })
	return nil
}

// Run runs the verification workers, the lease sweeper and the state
// flusher until ctx ends; it writes changed channel states once more and
// waits for the denials DenySubscription sent before returning.
func (h *Hub) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range h.cfg.VerifyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-h.verifyq:
					h.runVerify(ctx, j)
				}
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		h.sweepLeases(ctx)
	}()
	go func() {
		defer wg.Done()
		h.flushStates(ctx)
	}()
	wg.Wait()
	h.denials.Wait()
	return nil
}
