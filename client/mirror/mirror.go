package mirror

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/subscriber"
)

// Config configures a Mirror.
type Config struct {
	Dir       string // the mirror directory
	StatePath string // the state file; default Dir + ".rshub-state.json"
	// BaseURL maps locs to paths (see MapPath); empty mirrors host/path.
	BaseURL string
	Hub     string // hub URL
	Topic   string // topic URI
	// HubCapabilityList is the hub's pull-mode Capability List of the
	// topic; empty: found with HubChannel when first needed.
	HubCapabilityList string
	// ResourceList is the Source's Resource List for the baseline; empty:
	// the baseline comes from the hub's Change Lists.
	ResourceList string
	Client       *http.Client // default: 60 s timeout
	Logger       *slog.Logger // default: discard
	Events       func(Event)  // optional
	// Attempts bounds the tries of one resource fetch failing with a
	// transport error or 5xx; default 4.
	Attempts int
	Now      func() time.Time
	// Filter restricts the mirror to the entries it selects (loc
	// prefixes, change types; the zero Filter selects every entry). It is
	// applied here, by the consumer, to every notification whatever its
	// transport and to the baseline and the Change Lists of catch-ups, so
	// a filtered mirror ends equal to the Source restricted to the
	// filter. RunWebhook also asks the hub to filter (wire.ParamFilterPrefix,
	// wire.ParamFilterChange) and RunWebSocket sends it as the session's
	// query (wire.ParamPrefix, wire.ParamChange), which saves traffic;
	// NATS subjects carry every entry. A state file remembers the filter
	// it was made with: opening it with another one is refused.
	Filter changefeed.Filter
	// Framework also follows the channel's framework channel (see
	// IsFramework): its notifications are reported as EventFramework and
	// a Change List closing beyond the mirror's position heals it at once.
	Framework bool
}

// Update is one notification to apply.
type Update struct {
	Doc   *changefeed.Document
	Seq   uint64 // hub log sequence, 0 when unknown
	Via   string // transport, for events
	From  time.Time
	Until time.Time
}

// UpdateOf makes the Update of a parsed notification.
func UpdateOf(doc *changefeed.Document, seq uint64, via string) Update {
	return Update{Doc: doc, Seq: seq, Via: via, From: doc.MD.From.Time, Until: doc.MD.Until.Time}
}

// Mirror applies notifications to a directory. Its methods are safe for
// concurrent use; applying is serialised.
type Mirror struct {
	cfg Config
	mu  sync.Mutex // serialises applying and guards st
	st  State
}

// Open loads (or starts) the mirror's state. A state file made for
// another topic, filter or base URL is refused.
func Open(cfg Config) (*Mirror, error) {
	if cfg.Dir == "" || cfg.Topic == "" || cfg.Hub == "" {
		return nil, errors.New("mirror: Dir, Hub and Topic are required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	cfg.Dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	cfg.StatePath = cmp.Or(cfg.StatePath, dir+".rshub-state.json")
	cfg.Client = cmp.Or(cfg.Client, &http.Client{Timeout: 60 * time.Second})
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Attempts <= 0 {
		cfg.Attempts = 4
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	st, err := LoadState(cfg.StatePath)
	if err != nil {
		return nil, err
	}
	if st.Topic != "" && st.Topic != cfg.Topic {
		return nil, fmt.Errorf("mirror: state file %s belongs to topic %s, not %s", cfg.StatePath, st.Topic, cfg.Topic)
	}
	if st.Baselined && filterKey(st.Filter) != filterKey(&cfg.Filter) {
		return nil, fmt.Errorf("mirror: state file %s was made with filter %s, not %s: use a new mirror directory and state file", cfg.StatePath, filterKey(st.Filter), filterKey(&cfg.Filter))
	}
	if st.Baselined && st.BaseURL != nil && *st.BaseURL != cfg.BaseURL {
		return nil, fmt.Errorf("mirror: %s was made with base URL %s, not %s: its files would land at other paths; give the same base URL, or use a new mirror directory and state file",
			dir, baseKey(*st.BaseURL), baseKey(cfg.BaseURL))
	}
	base := cfg.BaseURL
	st.Topic, st.Hub, st.BaseURL = cfg.Topic, cfg.Hub, &base
	st.Filter = nil
	if !cfg.Filter.IsZero() {
		f := cfg.Filter
		st.Filter = &f
	}
	return &Mirror{cfg: cfg, st: st}, nil
}

// baseKey names a base URL for messages.
func baseKey(base string) string {
	if base == "" {
		return "none (paths host/path)"
	}
	return base
}

// State returns a copy of the current state.
func (m *Mirror) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st
}

// SetSubscription records the webhook subscription (nil: none) in the
// state file.
func (m *Mirror) SetSubscription(s *subscriber.Subscription) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.Subscription = s
	return SaveState(m.cfg.StatePath, m.st)
}

func (m *Mirror) emit(e Event) {
	if m.cfg.Events == nil {
		if e.Kind == EventWarning { // with no one taking events, the log is where a warning goes
			m.cfg.Logger.Warn(e.String())
		}
		return
	}
	if e.Time.IsZero() {
		e.Time = m.cfg.Now()
	}
	m.cfg.Events(e)
}

func (m *Mirror) save() error { return SaveState(m.cfg.StatePath, m.st) }

// Start takes the baseline when the mirror is empty, then catches up with
// everything the hub's Change Lists hold (Sync).
func (m *Mirror) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.st.Baselined {
		if err := m.baseline(ctx); err != nil {
			return err
		}
	}
	return m.catchUp(ctx, time.Time{}, false)
}

// Sync catches up with everything the hub's Change Lists hold.
func (m *Mirror) Sync(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.catchUp(ctx, time.Time{}, false)
}

// Apply applies one notification, catching up first when it reveals a
// gap. An error leaves the position where it was: applying the same
// notification again is safe.
func (m *Mirror) Apply(ctx context.Context, u Update) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if IsFramework(u.Doc) {
		return m.applyFrameworkLocked(ctx, u)
	}
	if u.From.IsZero() || u.Until.IsZero() {
		m.emit(Event{Kind: EventSkipped, Seq: u.Seq, Message: "not a change notification (no from/until)"})
		return nil
	}
	if !m.st.Baselined {
		if err := m.baseline(ctx); err != nil {
			return err
		}
	}
	p := m.st.Until
	// a window of the one instant P holds changes made at P and published
	// later (a followed Source's, told by identity): applied again, which
	// is harmless, rather than skipped
	instant := u.From.Equal(p) && u.Until.Equal(p)
	if !u.Until.After(p) && !p.IsZero() && !instant {
		m.st.Seq = max(m.st.Seq, u.Seq)
		m.emit(Event{Kind: EventDuplicate, Seq: u.Seq, From: u.From, Until: u.Until, Message: "already applied"})
		return m.save()
	}
	if p.IsZero() || u.From.After(p) {
		m.emit(Event{Kind: EventGap, Seq: u.Seq, From: p, Until: u.From, Message: "catching up from the hub's Change Lists"})
		if err := m.catchUp(ctx, u.From, true); err != nil {
			return err
		}
		p = u.From
	}
	var todo []*changefeed.Entry
	for i := range u.Doc.Entries {
		e := &u.Doc.Entries[i]
		if !m.cfg.Filter.Match(e) {
			continue
		}
		if t := changefeed.EntryTime(*e); t.IsZero() || !t.Before(p) {
			todo = append(todo, e)
		}
	}
	if err := m.applyEntries(ctx, todo, nil); err != nil {
		return err
	}
	m.st.Until = u.Until
	m.st.Seq = max(m.st.Seq, u.Seq)
	m.st.Applied++
	m.emit(Event{Kind: EventNotification, Seq: u.Seq, From: u.From, Until: u.Until, Entries: len(todo), Message: u.Via})
	return m.save()
}

// baseline fills an empty mirror from the Source's Resource List; without
// one the catch-up from the hub's Change Lists starts at the beginning.
func (m *Mirror) baseline(ctx context.Context) error {
	if m.cfg.ResourceList != "" {
		start := m.cfg.Now()
		m.emit(Event{Kind: EventBaseline, Loc: m.cfg.ResourceList, Message: "from the Source's Resource List"})
		var entries []*changefeed.Entry
		var at time.Time
		collect := func(e *changefeed.Entry) error { entries = append(entries, e); return nil }
		h, err := getDoc(ctx, m.cfg.Client, m.cfg.ResourceList, collect)
		if err != nil {
			return fmt.Errorf("mirror: Resource List: %w", err)
		}
		at = h.MD.At.Time
		if h.Kind == changefeed.SitemapIndex { // a Resource List Index
			parts := entries
			entries = nil
			for _, p := range parts {
				ph, err := getDoc(ctx, m.cfg.Client, p.Loc, collect)
				if err != nil {
					return fmt.Errorf("mirror: Resource List: %w", err)
				}
				if at.IsZero() || ph.MD.At.Time.Before(at) {
					at = ph.MD.At.Time
				}
			}
		}
		kept := entries[:0]
		for _, e := range entries {
			if e.MD == nil {
				e.MD = &changefeed.MD{Length: -1}
			}
			e.MD.Change = changefeed.Created
			if m.cfg.Filter.Match(e) {
				kept = append(kept, e)
			}
		}
		entries = kept
		if err := m.applyEntries(ctx, entries, func(done int) {
			m.emit(Event{Kind: EventProgress, Done: done, Total: len(entries), Message: "baseline"})
		}); err != nil {
			return err
		}
		m.st.Until = at
		m.emit(Event{Kind: EventCaughtUp, Until: at, Entries: len(entries), Elapsed: m.cfg.Now().Sub(start), Message: "baseline"})
	}
	m.st.Baselined = true
	return m.save()
}

// catchUp applies the entries of the hub's Change Lists with P <= datetime
// (and datetime <= bound when bounded), collapsed to the last change per
// resource, and moves P: to bound when bounded, else as far as the lists
// prove complete.
func (m *Mirror) catchUp(ctx context.Context, bound time.Time, bounded bool) error {
	start := m.cfg.Now()
	if m.cfg.HubCapabilityList == "" {
		cl, _, err := HubChannel(ctx, m.cfg.Client, m.cfg.Hub, m.cfg.Topic)
		if err != nil {
			return err
		}
		m.cfg.HubCapabilityList = cl
	}
	p := m.st.Until
	lists, err := changeLists(ctx, m.cfg.Client, m.cfg.HubCapabilityList)
	if err != nil {
		return err
	}
	var todo []listRef
	for _, l := range lists {
		if (!l.open() && l.Until.Before(p)) || (bounded && l.From.After(bound)) {
			continue
		}
		todo = append(todo, l)
	}
	if len(todo) > 0 && !p.IsZero() && todo[0].From.After(p) {
		m.emit(Event{Kind: EventWarning, From: p, Until: todo[0].From, Message: "the hub no longer holds the history between these times; changes in it may be missing"})
	}
	m.emit(Event{Kind: EventCatchUp, From: p, Until: bound, Total: len(todo)})
	// the lists' entries are coalesced as they are read (net change per
	// resource, coalesce.go): one fetch per resource changed, whatever the
	// number of lists, and only the net entries held
	co := newCoalescer(math.MaxInt)
	reached := p
	for i, l := range todo {
		var maxSeen time.Time
		var kept []changefeed.Entry
		_, err := getDoc(ctx, m.cfg.Client, l.URL, func(e *changefeed.Entry) error {
			t := changefeed.EntryTime(*e)
			if t.After(maxSeen) {
				maxSeen = t
			}
			if (!t.IsZero() && t.Before(p)) || (bounded && t.After(bound)) || !m.cfg.Filter.Match(e) {
				return nil
			}
			if e.MD == nil || e.MD.Change == "" {
				md := changefeed.MD{Length: -1}
				if e.MD != nil {
					md = *e.MD
				}
				md.Change = changefeed.Updated
				e.MD = &md
			}
			kept = append(kept, *e)
			return nil
		})
		var he *httpError
		if errors.As(err, &he) && he.status == http.StatusNotFound {
			m.emit(Event{Kind: EventWarning, Loc: l.URL, Message: errHistoryGone.Error()})
			continue
		}
		if err != nil {
			return fmt.Errorf("mirror: catch-up: %w", err)
		}
		if err := co.add(listDoc(l, maxSeen, co.lastUntil, kept), 0); err != nil {
			return err
		}
		if l.open() {
			reached = later(reached, l.From, maxSeen)
		} else {
			reached = later(reached, l.Until)
		}
		m.emit(Event{Kind: EventProgress, Done: i + 1, Total: len(todo), Message: "change lists"})
	}
	net, _, _, _, err := co.take()
	if err != nil {
		return err
	}
	var entries []*changefeed.Entry
	if net != nil {
		for i := range net.Entries {
			entries = append(entries, &net.Entries[i])
		}
	}
	if err := m.applyEntries(ctx, entries, func(done int) {
		m.emit(Event{Kind: EventProgress, Done: done, Total: len(entries), Message: "resources"})
	}); err != nil {
		return err
	}
	if bounded {
		reached = bound
	}
	if reached.After(m.st.Until) {
		m.st.Until = reached
	}
	m.emit(Event{Kind: EventCaughtUp, From: p, Until: m.st.Until, Entries: len(entries), Elapsed: m.cfg.Now().Sub(start)})
	return m.save()
}

// listDoc is a Change List's kept entries as a document for a coalescer:
// its window made to start at or after the previous list's end (prev)
// and, for an open list, to end at its latest entry.
func listDoc(l listRef, maxSeen, prev time.Time, entries []changefeed.Entry) *changefeed.Document {
	from := later(l.From, prev)
	until := later(from, l.Until, maxSeen)
	d := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: changefeed.MD{
		Capability: changefeed.CapChangeList, Length: -1,
		From: changefeed.NewDateTime(from), Until: changefeed.NewDateTime(until),
	}}}
	d.Entries = entries
	return d
}

func later(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}
