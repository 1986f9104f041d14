package publisher

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/wire"
)

// Config configures a Publisher.
type Config struct {
	Hub   string // hub URL, exactly as it goes in rel="hub"
	Topic string // topic URI of the channel (rel="self")
	// CapabilityList, when set, is linked from each notification (rs:ln
	// rel="up") and sent as Link rel="resourcesync".
	CapabilityList string
	Token          string       // optional Bearer token for channels with token trust
	Client         *http.Client // default: a client with a 30 s timeout
	Store          Store        // default: a MemoryStore
	// Start is the from of the first notification when the Store has no
	// state; default: the time New is called.
	Start   time.Time
	Backoff Backoff
	Now     func() time.Time // default time.Now
	Logger  *slog.Logger     // default: discard
	// OnRetry, when set, is told of every failed attempt that will be
	// retried (a transport error or a 5xx), with its 1-based number and
	// the wait before the next: a Source can say at once that the hub is
	// unreachable, where the log says it only at Info.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Backoff is the retry schedule for transport errors and 5xx answers:
// Initial, doubled per attempt up to Max, with ±20 % jitter, for at most
// Attempts tries in all.
type Backoff struct {
	Initial  time.Duration // default 200 ms
	Max      time.Duration // default 10 s
	Attempts int           // default 8; 1 means no retry
}

// Delay returns the wait before retry n (1-based), before jitter.
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = 200 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 10 * time.Second
	}
	if b.Attempts <= 0 {
		b.Attempts = 8
	}
	return b
}

// HubError is a refusal from the hub (a 4xx answer): retrying the same
// notification cannot help.
type HubError struct {
	Status int
	Reason string // the hub's plain-text explanation
}

// Error returns the status and the hub's reason.
func (e *HubError) Error() string {
	return fmt.Sprintf("publisher: hub refused the notification: %d %s: %s", e.Status, http.StatusText(e.Status), e.Reason)
}

// Result is the hub's acknowledgement of one notification.
type Result struct {
	Seq     uint64 // the hub's log sequence (header Rshub-Seq), 0 if the hub sent none
	Window  Window
	Entries int
	Reply   string // the hub's plain-text answer
}

// Publisher sends notifications for one topic. Its methods are safe for
// concurrent use; notifications go out one at a time.
type Publisher struct {
	cfg Config
	mu  sync.Mutex
	st  State
}

// New returns a Publisher that resumes from the state in cfg.Store.
func New(ctx context.Context, cfg Config) (*Publisher, error) {
	if cfg.Hub == "" || cfg.Topic == "" {
		return nil, errors.New("publisher: Hub and Topic are required")
	}
	cfg.Client = cmp.Or(cfg.Client, &http.Client{Timeout: 30 * time.Second})
	if cfg.Store == nil {
		cfg.Store = &MemoryStore{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Start.IsZero() {
		cfg.Start = cfg.Now()
	}
	cfg.Backoff = cfg.Backoff.withDefaults()
	st, err := cfg.Store.Load(ctx)
	if err != nil {
		return nil, err
	}
	return &Publisher{cfg: cfg, st: st}, nil
}

// Until returns the until of the last acknowledged notification (zero
// before the first).
func (p *Publisher) Until() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.Until
}

// Flush sends the notification left pending by an earlier failed Publish,
// if any. Publish calls it first.
func (p *Publisher) Flush(ctx context.Context) (Result, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked(ctx)
}

func (p *Publisher) flushLocked(ctx context.Context) (Result, bool, error) {
	if len(p.st.Pending) == 0 {
		return Result{}, false, nil
	}
	res, err := p.send(ctx, p.st.Pending)
	var he *HubError
	if errors.As(err, &he) {
		// refused for good: drop it so the publisher is not stuck; the
		// next notification starts at the last acknowledged until
		p.cfg.Logger.Warn("pending notification refused, dropped", "status", he.Status, "reason", he.Reason)
		p.st.Pending, p.st.PendingUntil = nil, time.Time{}
		if serr := p.cfg.Store.Save(ctx, p.st); serr != nil {
			return Result{}, true, errors.Join(err, serr)
		}
		return Result{}, true, err
	}
	if err != nil {
		return Result{}, true, err
	}
	res.Window = Window{From: p.st.Until, Until: p.st.PendingUntil}
	if p.st.Until.IsZero() {
		res.Window.From = p.cfg.Start
	}
	p.st.Until, p.st.Pending, p.st.PendingUntil = p.st.PendingUntil, nil, time.Time{}
	return res, true, p.cfg.Store.Save(ctx, p.st)
}

// Publish announces changes in one notification whose from is the
// previous until. A notification left pending by an earlier failure is
// sent first, unchanged. On error the new notification stays pending (and
// stored) unless the hub refused it (*HubError): the next Publish or Flush
// sends the identical bytes again.
func (p *Publisher) Publish(ctx context.Context, changes []Change) (Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, _, err := p.flushLocked(ctx); err != nil {
		return Result{}, fmt.Errorf("publisher: earlier notification still pending: %w", err)
	}
	from := p.st.Until
	if from.IsZero() {
		from = p.cfg.Start
	}
	w := NextWindow(from, p.cfg.Now(), changes)
	body, err := Build(w, changes, p.cfg.CapabilityList)
	if err != nil {
		return Result{}, err
	}
	p.st.Pending, p.st.PendingUntil = body, w.Until
	if err := p.cfg.Store.Save(ctx, p.st); err != nil {
		return Result{}, err
	}
	res, _, err := p.flushLocked(ctx)
	res.Window, res.Entries = w, len(changes)
	return res, err
}

// send POSTs body to the hub, retrying transport errors and 5xx.
func (p *Publisher) send(ctx context.Context, body []byte) (Result, error) {
	var last error
	var wait time.Duration
	for attempt := 1; attempt <= p.cfg.Backoff.Attempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return Result{}, errors.Join(last, ctx.Err())
			case <-t.C:
			}
		}
		res, retry, err := p.post(ctx, body)
		if err == nil {
			return res, nil
		}
		last = err
		if !retry || ctx.Err() != nil {
			return Result{}, err
		}
		if attempt == p.cfg.Backoff.Attempts {
			break
		}
		wait = p.cfg.Backoff.Delay(attempt)
		wait += time.Duration((rand.Float64()*0.4 - 0.2) * float64(wait))
		p.cfg.Logger.Info("publish failed, retrying", "attempt", attempt, "err", err, "wait", wait)
		if p.cfg.OnRetry != nil {
			p.cfg.OnRetry(attempt, err, wait)
		}
	}
	return Result{}, fmt.Errorf("publisher: gave up after %d attempts: %w", p.cfg.Backoff.Attempts, last)
}

// post makes one attempt and says whether another could succeed.
func (p *Publisher) post(ctx context.Context, body []byte) (Result, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.Hub, bytes.NewReader(body))
	if err != nil {
		return Result{}, false, fmt.Errorf("publisher: hub URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set(wire.HeaderLink, wire.NotificationLinks(p.cfg.Topic, p.cfg.Hub, p.cfg.CapabilityList))
	if p.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.Token)
	}
	resp, err := p.cfg.Client.Do(req)
	if err != nil {
		return Result{}, true, fmt.Errorf("publisher: POST %s: %w", p.cfg.Hub, err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	text := strings.TrimSpace(string(reply))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		seq, _ := strconv.ParseUint(resp.Header.Get(wire.HeaderSeq), 10, 64)
		return Result{Seq: seq, Reply: text}, false, nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusRequestTimeout:
		return Result{}, false, &HubError{Status: resp.StatusCode, Reason: text}
	default:
		return Result{}, true, fmt.Errorf("publisher: hub answered %d: %s", resp.StatusCode, text)
	}
}
