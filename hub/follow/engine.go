package follow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// Hub is what the engine needs of the hub; *hub.Hub implements it.
type Hub interface {
	// Continuity returns the channel's state; LastUntil is its anchor.
	Continuity(ctx context.Context, ch hub.Channel) (hub.ChannelState, error)
	// FollowAnchor returns the channel's state and the entries of its last
	// notification at its anchor (known false when the log lost them).
	FollowAnchor(ctx context.Context, ch hub.Channel) (st hub.ChannelState, atAnchor []changefeed.Entry, known bool, err error)
	// PublishFollowed publishes entries chosen from a fetched Change List.
	PublishFollowed(ctx context.Context, ch hub.Channel, f hub.Followed) (hub.PublishResult, error)
}

// Store is what the engine needs of the hub's state store; every
// hub.Store implements it.
type Store interface {
	Channels(ctx context.Context) ([]hub.Channel, error)
	Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, owner string) error
	// The follower statuses, by topic (see hub.Store).
	PutFollowStatus(ctx context.Context, topic string, status []byte) error
	FollowStatus(ctx context.Context, topic string) ([]byte, error)
	FollowStatuses(ctx context.Context) (map[string][]byte, error)
	DeleteFollowStatus(ctx context.Context, topic string) error
}

// Observer receives the engine's events, for metrics. Implementations must
// be safe for concurrent use and must not block.
type Observer interface {
	// Polled is called after each poll with outcome "ok" or "error".
	Polled(channel, outcome string)
	// Fetched is called after each poll with the body bytes it fetched.
	Fetched(channel string, bytes int)
	// Leniency is called for each leniency (rule) in a fetched document.
	Leniency(channel, rule string)
}

type nopObserver struct{}

func (nopObserver) Polled(string, string)   {}
func (nopObserver) Fetched(string, int)     {}
func (nopObserver) Leniency(string, string) {}

// Config configures an Engine. Hub, Store and Client are required.
type Config struct {
	Hub   Hub
	Store Store
	// Client makes every fetch: the hub's SSRF-guarded client
	// (hub.Config.Client), which refuses non-global addresses unless
	// allowed and never follows redirects.
	Client *http.Client
	// MaxBody limits each fetched document (default 10 MiB, as the hub's).
	MaxBody int64
	// FetchTimeout bounds each GET (default 30 s; ten poll intervals, at
	// least a second, when that is shorter).
	FetchTimeout time.Duration
	// MaxBackoff bounds the wait after failed polls (default 10 min).
	MaxBackoff time.Duration
	// MaxWait bounds how long a max-age or Retry-After postpones a poll
	// (default 1 hour).
	MaxWait time.Duration
	// Reconcile is how often the engine reads the channels to start and
	// stop followers (default 5 s).
	Reconcile time.Duration
	// Owner names this hub process in the follow claims; ClaimTTL is their
	// least lifetime (default 30 s; at least three poll intervals).
	Owner    string
	ClaimTTL time.Duration
	Observer Observer
	// Tracer makes a span of each poll, the root of the trace of what it
	// publishes; default a no-op tracer.
	Tracer trace.Tracer
	Logger *slog.Logger
	// Dir is where followers of Resource-List-only Sources keep the
	// snapshot of the last list read, one file per channel (package
	// rldiff); default: a directory Run makes in the system's temporary
	// directory and removes when it ends (followers keep their state in
	// memory too: a restarted hub takes a new baseline).
	Dir string
	// Now is the clock of the status (default time.Now); Rand gives the
	// jitter, in [0, 1) (default math/rand/v2).
	Now  func() time.Time
	Rand func() float64
}

// Engine runs one follower per followed channel.
type Engine struct {
	cfg    Config
	logger *slog.Logger

	// recMu serialises reconciles (Run's and PollNow's), so one that read
	// the channels earlier never undoes one that read them later.
	recMu sync.Mutex
	// reconciled is the channels version the followers match (under
	// recMu): a reconcile that finds it again lists nothing. "" when
	// unknown.
	reconciled string

	mu        sync.Mutex
	followers map[string]*running // by channel name
	// runCtx is Run's context while it runs: followers started by PollNow
	// live as long as those Run starts.
	runCtx  context.Context
	dir     string // Config.Dir, or the temporary one snapshotDir made (madeDir)
	madeDir bool
}

type running struct {
	f      *follower
	key    string // what the follower was started with
	cancel context.CancelFunc
	done   chan struct{}
}

// New validates cfg and returns an Engine; Run starts it.
func New(cfg Config) (*Engine, error) {
	if cfg.Hub == nil || cfg.Store == nil || cfg.Client == nil {
		return nil, errors.New("follow: Hub, Store and Client are required")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 10 << 20
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = 30 * time.Second
	}
	if cfg.Reconcile <= 0 {
		cfg.Reconcile = 5 * time.Second
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = 30 * time.Second
	}
	cfg.Owner = cmp.Or(cfg.Owner, "rshub")
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.Tracer == nil {
		cfg.Tracer = noop.Tracer{}
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return &Engine{cfg: cfg, logger: cfg.Logger, followers: map[string]*running{}}, nil
}

func (e *Engine) observe() Observer { return e.cfg.Observer }
func (e *Engine) rand() float64     { return e.cfg.Rand() }

// Run follows the followed channels until ctx ends, reading the channels
// every Reconcile, when their version moved (a store that tells it), to
// start, restart (changed settings) and stop followers.
func (e *Engine) Run(ctx context.Context) error {
	tick := time.NewTicker(e.cfg.Reconcile)
	defer tick.Stop()
	e.mu.Lock()
	e.runCtx = ctx
	e.mu.Unlock()
	defer e.removeDir() // after stopAll: no follower writes there any more
	defer e.stopAll()
	for {
		e.reconcile(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// reconcile starts and stops followers to match the store's channels.
func (e *Engine) reconcile(ctx context.Context) {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	// A listing is a copy of every channel (megabytes at 100,000): taken
	// only when the channels changed since the followers were matched.
	ver := ""
	if vs, ok := e.cfg.Store.(hub.ChannelsVersioner); ok {
		v, err := vs.ChannelsVersion(ctx)
		if err == nil && v != "" && v == e.reconciled {
			return
		}
		ver = v // on an error "": list, and look again next time
	}
	chs, err := e.cfg.Store.Channels(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.logger.Warn("follow: listing channels failed; retrying", "err", err)
		}
		return
	}
	e.reconciled = ver // read before the listing: a change after it moves the version again
	want := map[string]hub.Channel{}
	for _, ch := range chs {
		if ch.Follow != "" {
			want[ch.Name] = ch
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, r := range e.followers {
		if ch, ok := want[name]; !ok || key(ch) != r.key {
			r.cancel()
			<-r.done
			delete(e.followers, name)
			_ = e.cfg.Store.Release(context.WithoutCancel(ctx), "follow/"+name, e.cfg.Owner)
			if topic := r.f.ch.Topic; !ok || ch.Topic != topic {
				// no longer followed: its status goes (the store drops it
				// with the channel, but the follower may have written it
				// again after)
				if err := e.cfg.Store.DeleteFollowStatus(context.WithoutCancel(ctx), topic); err != nil {
					e.logger.Warn("follow: removing the follow status failed", "channel", name, "err", err)
				}
			}
		}
	}
	for name, ch := range want {
		if _, ok := e.followers[name]; ok {
			continue
		}
		fctx, cancel := context.WithCancel(ctx)
		r := &running{f: newFollower(e, ch), key: key(ch), cancel: cancel, done: make(chan struct{})}
		e.followers[name] = r
		go func() {
			defer close(r.done)
			r.f.run(fctx)
		}()
		e.logger.Info("follow: following", "channel", name, "source", ch.Follow, "interval", ch.PollEvery(), "validation", ch.Validation)
	}
}

// key is what a follower depends on: a change restarts it.
func key(ch hub.Channel) string {
	return ch.Topic + "\x00" + ch.Follow + "\x00" + ch.PollInterval + "\x00" + ch.Validation
}

func (e *Engine) stopAll() {
	e.recMu.Lock()
	defer e.recMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runCtx = nil
	e.reconciled = "" // no follower left: the next Run lists the channels
	for name, r := range e.followers {
		r.cancel()
		<-r.done
		_ = e.cfg.Store.Release(context.Background(), "follow/"+name, e.cfg.Owner)
		delete(e.followers, name)
	}
}

// snapshotDir is where followers keep Resource List snapshots:
// Config.Dir, or a temporary directory made at the first call; "" when it
// cannot be made.
func (e *Engine) snapshotDir() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dir == "" && e.cfg.Dir != "" {
		e.dir = e.cfg.Dir
	}
	if e.dir == "" {
		tmp, err := os.MkdirTemp("", "rshub-follow-")
		if err != nil {
			e.logger.Error("follow: no directory for Resource List snapshots", "err", err)
			return ""
		}
		e.dir, e.madeDir = tmp, true
	}
	return e.dir
}

// removeDir removes the temporary directory snapshotDir made.
func (e *Engine) removeDir() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.madeDir {
		_ = os.RemoveAll(e.dir)
		e.dir, e.madeDir = "", false
	}
}

// Statuses returns the status of every followed channel as the store
// has it, ordered by channel name: every hub sharing the store answers the
// same.
func (e *Engine) Statuses(ctx context.Context) ([]Status, error) {
	chs, err := e.cfg.Store.Channels(ctx)
	if err != nil {
		return nil, fmt.Errorf("follow: statuses: %w", err)
	}
	stored, err := e.cfg.Store.FollowStatuses(ctx)
	if err != nil {
		return nil, fmt.Errorf("follow: statuses: %w", err)
	}
	out := []Status{}
	for _, ch := range chs {
		if ch.Follow != "" {
			out = append(out, e.statusOf(ch, stored[ch.Topic]))
		}
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Channel, b.Channel) })
	return out, nil
}

// Status returns the status of the followed channel ch as the store has it.
func (e *Engine) Status(ctx context.Context, ch hub.Channel) (Status, error) {
	b, err := e.cfg.Store.FollowStatus(ctx, ch.Topic)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return Status{}, fmt.Errorf("follow: status of %s: %w", ch.Name, err)
	}
	return e.statusOf(ch, b), nil
}

// statusOf decodes the stored status b of ch, telling whether its owner's
// claim expired. None, or one written for another Source (the channel
// changed since), is the status before the first poll.
func (e *Engine) statusOf(ch hub.Channel, b []byte) Status {
	var st Status
	if b != nil {
		if err := json.Unmarshal(b, &st); err != nil {
			e.logger.Warn("follow: undecodable follow status in the store", "channel", ch.Name, "err", err)
			st = Status{}
		}
	}
	if st.Source != ch.Follow {
		st = newStatus(ch)
	}
	st.Channel = ch.Name
	st.Expired = !st.ClaimExpires.IsZero() && e.cfg.Now().After(st.ClaimExpires)
	if st.Leniencies == nil {
		st.Leniencies = []LeniencyCount{}
	}
	return st
}

// PollNow makes the follower of the channel named name poll at once and
// reports whether the channel is followed. A channel created since the
// engine last read the channels is read now (no wait for the next
// reconcile).
func (e *Engine) PollNow(name string) bool {
	e.mu.Lock()
	r, ok := e.followers[name]
	ctx := e.runCtx
	e.mu.Unlock()
	if !ok && ctx != nil {
		e.reconcile(ctx)
		e.mu.Lock()
		r, ok = e.followers[name]
		e.mu.Unlock()
	}
	if ok {
		select {
		case r.f.poke <- struct{}{}:
		default:
		}
	}
	return ok
}
