package natsconn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rshub/rshub/wire"
)

var (
	// ErrDisconnected is wrapped by every error of Do, Err and Wait while
	// there is no usable connection: none yet, reconnecting, or closed.
	ErrDisconnected = errors.New("natsconn: not connected")
	// ErrClosed is wrapped, with ErrDisconnected, once Close was called or
	// the context given to New ended.
	ErrClosed = errors.New("natsconn: closed")
)

// Defaults for Config.
const (
	DefaultReconnectWait = 250 * time.Millisecond
	DefaultMinRedial     = 50 * time.Millisecond
	DefaultMaxRedial     = 5 * time.Second
)

// statusPoll is how often the connection's status is read even without an
// event, in case nats.go dropped one.
const statusPoll = time.Second

// DialFunc opens a new connection. It must apply opts after its own
// options: they make the connection reconnect forever by itself and
// refuse (rather than buffer) publishes while it reconnects.
type DialFunc func(ctx context.Context, opts ...nats.Option) (*nats.Conn, error)

// URL returns a DialFunc connecting to url (comma-separated server URLs)
// with opts, then the Conn's options.
func URL(url string, opts ...nats.Option) DialFunc {
	return func(_ context.Context, extra ...nats.Option) (*nats.Conn, error) {
		nc, err := nats.Connect(url, append(slices.Clip(opts), extra...)...)
		if err != nil {
			return nil, fmt.Errorf("natsconn: connect %s: %w", wire.RedactURLs(url), err)
		}
		return nc, nil
	}
}

// Config configures a Conn.
type Config struct {
	Dial          DialFunc      // opens a connection (required)
	ReconnectWait time.Duration // nats.go's wait between its own reconnect attempts; default 250 ms
	MinRedial     time.Duration // first wait before dialling again; default 50 ms
	MaxRedial     time.Duration // longest wait between dials; default 5 s
	Logger        *slog.Logger  // connection events; default: none
	// Where names the server in log lines; default: the URL the
	// connection reports (which an in-process connection does not have:
	// nats.go reports its default URL there).
	Where string
}

// Status is a snapshot of a Conn's health.
type Status struct {
	// Connected reports whether the current connection is CONNECTED.
	Connected bool
	// Generation counts the connections dialled: 0 before the first, then
	// 1, 2… It changes when a CLOSED connection was replaced, not when
	// nats.go reconnects one connection by itself.
	Generation uint64
	// Since is when Connected last changed (when the Conn was created,
	// before the first connection).
	Since time.Time
	// LastErr is the last error a connection reported or a dial returned;
	// it is kept after the connection recovers.
	LastErr error
	// Closed reports whether Close was called or New's context ended.
	Closed bool
}

// Conn owns the current *nats.Conn and replaces it when it is closed. Its
// methods are safe for concurrent use.
type Conn struct {
	cfg    Config
	static *nats.Conn // FromConn: never redialled, never closed by Close
	log    *slog.Logger
	stop   context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	nc        *nats.Conn
	gen       uint64
	connected bool
	since     time.Time
	lastErr   error
	closed    bool
	changed   chan struct{}
	epoch     context.Context // ends, with the reason as cause, when the connection stops being usable
	endEpoch  context.CancelCauseFunc
}

// New returns a Conn that dials cfg.Dial in the background, at once and
// again with backoff whenever its connection ends up CLOSED, until ctx
// ends or Close is called. Use Wait to wait for the first connection.
func New(ctx context.Context, cfg Config) (*Conn, error) {
	if cfg.Dial == nil {
		return nil, errors.New("natsconn: Config.Dial is required")
	}
	if cfg.ReconnectWait <= 0 {
		cfg.ReconnectWait = DefaultReconnectWait
	}
	if cfg.MinRedial <= 0 {
		cfg.MinRedial = DefaultMinRedial
	}
	if cfg.MaxRedial < cfg.MinRedial {
		cfg.MaxRedial = max(DefaultMaxRedial, cfg.MinRedial)
	}
	return start(ctx, cfg, nil), nil
}

// FromConn wraps a connection the caller owns: Do, Status and Err follow
// it, but it is never replaced (its generation stays 1) and Close does not
// close it. It lets code written for a Conn run on a plain *nats.Conn.
func FromConn(nc *nats.Conn) *Conn {
	return start(context.Background(), Config{MinRedial: DefaultMinRedial, MaxRedial: DefaultMaxRedial}, nc)
}

func start(ctx context.Context, cfg Config, static *nats.Conn) *Conn {
	log := cfg.Logger
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	ctx, stop := context.WithCancel(ctx)
	c := &Conn{cfg: cfg, static: static, log: log, stop: stop, done: make(chan struct{}),
		since: time.Now(), changed: make(chan struct{})}
	c.epoch, c.endEpoch = context.WithCancelCause(context.Background())
	c.endEpoch(ErrDisconnected)
	go c.run(ctx)
	return c
}

// Current returns the current connection (nil before the first) and its
// generation. The connection may be reconnecting or closed; prefer Do.
func (c *Conn) Current() (*nats.Conn, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nc, c.gen
}

// Status returns a snapshot of the connection's health.
func (c *Conn) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Status{Connected: c.connected, Generation: c.gen, Since: c.since, LastErr: c.lastErr, Closed: c.closed}
}

// Err returns nil while connected, otherwise an error wrapping
// ErrDisconnected that says for how long and why.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errLocked()
}

func (c *Conn) errLocked() error {
	switch {
	case c.closed:
		return fmt.Errorf("%w: %w", ErrDisconnected, ErrClosed)
	case c.connected:
		return nil
	case c.lastErr != nil:
		return fmt.Errorf("%w for %s: %w", ErrDisconnected, time.Since(c.since).Round(time.Millisecond), c.lastErr)
	default:
		return fmt.Errorf("%w for %s", ErrDisconnected, time.Since(c.since).Round(time.Millisecond))
	}
}

// Changed returns a channel closed at the next change of Status:
// connected or not, generation, closed.
func (c *Conn) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Wait returns once the Conn is connected, or an error when ctx ends or the
// Conn is closed first.
func (c *Conn) Wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		err, ch := c.errLocked(), c.changed
		c.mu.Unlock()
		if err == nil || errors.Is(err, ErrClosed) {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("natsconn: wait: %w (%w)", ctx.Err(), c.Err())
		}
	}
}

// Do calls fn with the current connection and its generation. It fails at
// once, without calling fn, while not connected. fn's context also ends
// when the connection is lost meanwhile, and an error of fn is then
// wrapped with one wrapping ErrDisconnected (as it is when the connection
// is no longer connected when fn fails), so callers can tell "try again
// later" from other failures.
func (c *Conn) Do(ctx context.Context, fn func(ctx context.Context, nc *nats.Conn, gen uint64) error) error {
	c.mu.Lock()
	if err := c.errLocked(); err != nil {
		c.mu.Unlock()
		return err
	}
	nc, gen, epoch := c.nc, c.gen, c.epoch
	c.mu.Unlock()
	opCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(epoch, func() { cancel(context.Cause(epoch)) })
	defer stop()
	err := fn(opCtx, nc, gen)
	if err == nil || ctx.Err() != nil {
		return err
	}
	if epoch.Err() != nil {
		return fmt.Errorf("%w: %w", context.Cause(epoch), err)
	}
	if st := nc.Status(); st != nats.CONNECTED {
		// lost, and the Conn has not noticed yet
		return fmt.Errorf("%w: connection %s: %w", ErrDisconnected, st, err)
	}
	return err
}

// Close stops redialling and closes the current connection (except one
// given to FromConn). Operations fail with ErrClosed afterwards.
func (c *Conn) Close() {
	c.stop()
	<-c.done
	c.finish()
}

// finish marks the Conn closed and closes the connection it dialled.
func (c *Conn) finish() {
	c.mu.Lock()
	if !c.closed {
		c.closed, c.connected, c.since = true, false, time.Now()
		c.endEpoch(fmt.Errorf("%w: %w", ErrDisconnected, ErrClosed))
		c.notifyLocked()
	}
	nc := c.nc
	c.mu.Unlock()
	if c.static == nil && nc != nil {
		nc.Close()
	}
}

// notifyLocked closes the Changed channel and replaces it.
func (c *Conn) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// backoff returns the wait before dial number attempt (from 1), with
// jitter.
func (c *Conn) backoff(attempt int) time.Duration {
	d := c.cfg.MaxRedial
	if attempt < 30 {
		d = min(c.cfg.MinRedial<<(attempt-1), c.cfg.MaxRedial)
	}
	return d/2 + rand.N(d/2+1)
}
