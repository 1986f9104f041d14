package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// maxDiscoverySteps bounds the documents one discovery fetches.
const maxDiscoverySteps = 8

// listing is an index or archive as last read: whether it is an index of
// archive pages, and its lists.
type listing struct {
	pages bool
	refs  []ListRef
}

// follower follows one channel's Source. Its fields are used by its own
// goroutine only, except st (under mu).
type follower struct {
	e      *Engine
	ch     hub.Channel
	logger *slog.Logger
	fetch  *fetcher
	plan   Plan
	done   map[string]bool    // closed lists read to their end, by ListRef.key
	cached map[string]listing // indexes and archives, for a 304
	poke   chan struct{}
	// age is the smallest Cache-Control max-age of this poll's documents
	// that may change (indexes, archives, open lists; 0 for one without),
	// -1 before the first: the next poll comes no earlier.
	age time.Duration
	// seen is what the channel holds at its anchor, seq the log sequence
	// of its last notification when seen was taken: when the channel's
	// last sequence differs (another hub published, an operator reset the
	// anchor, the follower just started), seen is read again from the log.
	// covered is the time up to which the channel holds all the Source's
	// changes: its anchor, or the until of a closed list read to its end.
	seen    changefeed.Seen
	seq     uint64
	covered time.Time
	// rl is the last Resource List read, of a Source without Change Lists.
	rl *rlState

	// saved is when the status was last written to the store.
	saved time.Time

	mu sync.Mutex
	st Status
}

// fetchTimeout bounds each GET of a channel polled every interval: the
// engine's FetchTimeout, or ten intervals (at least a second) when that is
// shorter, so a Source that hangs delays a frequent poll little.
func fetchTimeout(limit, interval time.Duration) time.Duration {
	return min(limit, max(time.Second, 10*interval))
}

func newFollower(e *Engine, ch hub.Channel) *follower {
	return &follower{
		e:      e,
		ch:     ch,
		logger: e.logger.With("channel", ch.Name),
		fetch:  &fetcher{client: e.cfg.Client, maxBody: e.cfg.MaxBody, timeout: fetchTimeout(e.cfg.FetchTimeout, ch.PollEvery()), now: e.cfg.Now, memo: map[string]Validators{}},
		done:   map[string]bool{},
		cached: map[string]listing{},
		poke:   make(chan struct{}, 1),
		st:     newStatus(ch),
	}
}

// status returns a copy of the follower's status.
func (f *follower) status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.clone()
}

// counted counts a list published, and the gap it recorded, if any.
func (f *follower) counted(res hub.PublishResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.Lists++
	if res.Gap != nil {
		f.st.Gaps++
		f.st.LastGap = res.Gap
	}
}

// run polls until ctx ends.
func (f *follower) run(ctx context.Context) {
	defer f.dropSnapshot()
	timing := Timing{Interval: f.ch.PollEvery(), MaxBackoff: f.e.cfg.MaxBackoff, MaxWait: f.e.cfg.MaxWait}
	timer := time.NewTimer(0)
	defer timer.Stop()
	// flush fires when a status that waits for its write may be written
	var flush <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-flush:
			flush = f.save(ctx)
			continue
		case <-timer.C:
		case <-f.poke:
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
		delay, owned := f.turn(ctx, timing)
		f.mu.Lock()
		f.st.NextPoll = f.e.cfg.Now().Add(delay)
		f.mu.Unlock()
		flush = nil // another hub's status is not overwritten with this one's
		if owned {
			flush = f.save(ctx)
		}
		timer.Reset(delay)
	}
}

// save writes the status to the store, for every hub sharing it to show,
// at most once every statusEvery: when the last write is more recent, it
// returns a channel that fires when the status may be written.
func (f *follower) save(ctx context.Context) <-chan time.Time {
	now := f.e.cfg.Now()
	if wait := f.saved.Add(statusEvery).Sub(now); !f.saved.IsZero() && wait > 0 {
		return time.After(wait)
	}
	st := f.status().bounded()
	st.Updated = now
	b, err := json.Marshal(st)
	if err == nil {
		err = f.e.cfg.Store.PutFollowStatus(ctx, f.ch.Topic, b)
	}
	if err != nil {
		if ctx.Err() == nil {
			f.logger.Warn("follow: writing the follow status to the store failed", "err", err)
		}
		return nil // the next poll writes it again
	}
	f.saved = now
	return nil
}

// turn claims the channel and polls once; it returns the wait before the
// next turn and whether this hub holds the channel's claim.
func (f *follower) turn(ctx context.Context, timing Timing) (time.Duration, bool) {
	ttl := max(f.e.cfg.ClaimTTL, 3*timing.Interval)
	claimed := f.e.cfg.Now()
	owner, err := f.e.cfg.Store.Claim(ctx, "follow/"+f.ch.Name, f.e.cfg.Owner, ttl)
	if err == nil && !owner {
		return NextDelay(timing, 0, 0, 0, f.e.rand()), false
	}
	var pollErr error
	if err != nil {
		pollErr = fmt.Errorf("claim: %w", err)
	} else {
		pctx, span := f.e.cfg.Tracer.Start(ctx, "rshub.follow.poll", trace.WithNewRoot(),
			trace.WithAttributes(attribute.String("rshub.channel", f.ch.Name)))
		if pollErr = f.poll(pctx); pollErr != nil {
			span.SetStatus(codes.Error, clip(pollErr.Error()))
		}
		span.End()
	}
	if ctx.Err() != nil {
		return 0, false
	}
	now := f.e.cfg.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		f.st.Owner, f.st.ClaimExpires = f.e.cfg.Owner, claimed.Add(ttl)
	}
	f.st.Polls++
	f.st.LastPoll = now
	f.st.Plan = f.plan
	f.st.Requests, f.st.NotModified, f.st.Bytes = f.fetch.requests, f.fetch.notModified, f.fetch.bytes
	f.st.Timeouts, f.st.FetchTimeout = f.fetch.timeouts, f.fetch.timeout.String()
	var retry time.Duration
	if pollErr != nil {
		f.st.Errors++
		f.st.Failures++
		f.st.LastError = clip(pollErr.Error())
		var se *StatusError
		if errors.As(pollErr, &se) {
			retry = se.RetryAfter
		}
		f.logger.Warn("follow: poll failed; backing off", "failures", f.st.Failures, "err", f.st.LastError)
		f.e.observe().Polled(f.ch.Name, "error")
	} else {
		if f.st.Failures > 0 {
			f.logger.Info("follow: polling works again", "after_failures", f.st.Failures)
		}
		f.st.Failures = 0
		f.st.LastError = ""
		f.st.LastSuccess = now
		f.e.observe().Polled(f.ch.Name, "ok")
	}
	return NextDelay(timing, f.st.Failures, max(f.age, 0), retry, f.e.rand()), err == nil
}

// parse reads a fetched body in the channel's validation mode, recording
// leniencies; guessedFrom is set when the root from was missing and
// stands in.
func (f *follower) parse(u string, body []byte) (doc *changefeed.Document, guessedFrom bool, err error) {
	doc, ls, err := hub.ParseFollowed(body, u, f.ch.Lenient(), f.e.cfg.MaxBody)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", clip(u), err)
	}
	if len(ls) > 0 {
		f.mu.Lock()
		f.st.addLeniencies(ls, f.e.cfg.Now())
		f.mu.Unlock()
		for _, l := range ls {
			f.e.observe().Leniency(f.ch.Name, l.Rule)
			f.logger.Info("follow: leniency", "url", clip(u), "rule", l.Rule, "msg", l.Msg)
			guessedFrom = guessedFrom || l.Rule == string(changefeed.RuleRootAttributes)
		}
	}
	return doc, guessedFrom, nil
}

// listing reads an index, archive or archive page, conditionally.
func (f *follower) listing(ctx context.Context, u string) (listing, error) {
	resp, err := f.fetch.get(ctx, u, f.cached[u].refs != nil)
	if err != nil {
		return listing{}, f.lost(u, err)
	}
	f.noteAge(resp.maxAge)
	if resp.notModified {
		return f.cached[u], nil
	}
	doc, _, err := f.parse(u, resp.body)
	if err != nil {
		return listing{}, err
	}
	archive := doc.MD.Capability == changefeed.CapChangeListArchive
	ls := listing{pages: doc.Kind == changefeed.SitemapIndex && archive, refs: refsOf(doc, u, archive)}
	if ls.refs == nil {
		ls.refs = []ListRef{}
	}
	f.cached[u] = ls
	f.fetch.keep(resp)
	return ls, nil
}

// noteAge takes the max-age of a document that may change into the poll's.
func (f *follower) noteAge(a time.Duration) {
	if f.age < 0 || a < f.age {
		f.age = a
	}
}

// lost handles a failed fetch of u: a document the plan names that is gone
// (404, 410) makes the next poll discover again.
func (f *follower) lost(u string, err error) error {
	var se *StatusError
	if errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusGone) &&
		(u == f.plan.ChangeList || u == f.plan.Index || u == f.plan.Archive || u == f.plan.ResourceList) {
		f.plan = Plan{}
		f.cached = map[string]listing{}
	}
	return err
}

// discover finds what to read, starting at the Source URL (Classify).
func (f *follower) discover(ctx context.Context) (Plan, error) {
	queue := []string{f.ch.Follow}
	seen := map[string]bool{}
	wk := wellKnown(f.ch.Follow)
	triedWK := false
	var plan Plan
	var firstErr error
	named := map[string]bool{} // the Change Lists (or Indexes) a Capability List named
	var clErr error            // the first of them that could not be read
	for steps := 0; len(queue) > 0 && steps < maxDiscoverySteps; steps++ {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			steps--
			continue
		}
		seen[u] = true
		triedWK = triedWK || u == wk
		step, err := f.discoverOne(ctx, u)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if err != nil && named[u] && clErr == nil {
			clErr = err
		}
		if step.Plan.CapabilityList == u {
			for _, n := range step.Next { // a Capability List's next are its Change Lists
				named[n] = true
			}
		}
		plan = plan.merge(step.Plan)
		queue = append(queue, step.Next...)
		if len(queue) == 0 && plan.Empty() && !triedWK && wk != "" {
			queue = append(queue, wk)
		}
	}
	if plan.Empty() {
		if firstErr != nil {
			return plan, fmt.Errorf("discovery from %s: %w", clip(f.ch.Follow), firstErr)
		}
		return plan, fmt.Errorf("discovery from %s found no Change List, Change List Index or archive", clip(f.ch.Follow))
	}
	if clErr != nil && !plan.changes() {
		return f.fallBack(plan, clErr)
	}
	return plan, nil
}

// RuleChangeListFallback is the leniency of a lenient channel that follows
// its Source's Resource List because the Change List its Capability List
// names cannot be read.
const RuleChangeListFallback = "changelist-fallback"

// fallBack decides what a channel whose Source's Change List cannot be
// read (err) follows: a strict channel nothing (the error, every poll,
// until the Source mends it), a lenient one the Resource List of plan,
// recorded as a leniency and a warning.
func (f *follower) fallBack(plan Plan, err error) (Plan, error) {
	if !f.ch.Lenient() {
		return Plan{}, fmt.Errorf("strict channel: the Change List cannot be followed, and the Resource List is not followed instead (validation lenient does): %w", err)
	}
	msg := clip(fmt.Sprintf("the Change List cannot be followed (%v): following the Resource List instead", err))
	f.mu.Lock()
	f.st.addLeniencies([]hub.Leniency{{Rule: RuleChangeListFallback, Msg: msg}}, f.e.cfg.Now())
	f.mu.Unlock()
	f.e.observe().Leniency(f.ch.Name, RuleChangeListFallback)
	f.logger.Warn("follow: the Source's Change List cannot be followed; the lenient channel follows its Resource List instead", "err", clip(err.Error()), "resourcelist", clip(plan.ResourceList))
	return plan, nil
}

// discoverOne fetches one document of discovery and classifies it.
func (f *follower) discoverOne(ctx context.Context, u string) (Step, error) {
	resp, err := f.fetch.get(ctx, u, false)
	if err != nil {
		return Step{}, err
	}
	links := resp.header.Values("Link")
	if !changefeed.Sniff(resp.body).ResourceSync {
		return Classify(u, links, nil), nil
	}
	doc, _, err := f.parse(u, resp.body)
	if err != nil {
		return Classify(u, links, nil), err
	}
	return Classify(u, links, doc), nil
}
