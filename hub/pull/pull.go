package pull

import (
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/loophealth"
	"github.com/rshub/rshub/wire"
)

// ChannelLister lists the channels whose documents are served. hub.Store
// satisfies it.
type ChannelLister interface {
	// Channels lists every channel, ordered by topic.
	Channels(ctx context.Context) ([]hub.Channel, error)
}

// RangeLog is a hub.Log that can also read a run of one channel's records in
// one pass; Pull uses it, when the log has it, instead of one Next per
// record.
type RangeLog interface {
	hub.Log
	// Range calls fn, in order, for each record of channel whose sequence
	// lies in [from, to], until fn returns an error.
	Range(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error
}

// Defaults for Config.
const (
	// DefaultCacheBytes is the default budget for rendered closed Change
	// Lists kept in memory, gzip-compressed.
	DefaultCacheBytes = 64 << 20
	// ChannelsTTL is how long the channel list from the ChannelLister is reused.
	ChannelsTTL = time.Second
	// Poll is how often Run catches up with the log even without a change
	// signal.
	Poll = 5 * time.Second
	// ShortMaxAge is the Cache-Control max-age, in seconds, of documents that
	// change: the open Change List, indexes, archives, Capability Lists and
	// the Source Description.
	ShortMaxAge = 5
)

// Config configures a Pull.
type Config struct {
	// HubURL is the WebSub hub URL advertised with rel="hub" next to each
	// channel's change-notification entry.
	HubURL string
	// BaseURL is the public URL the routes are served under, for example
	// "https://hub.example.org"; documents link with absolute URLs built on it.
	BaseURL string
	// Rotation says when Change Lists are closed.
	Rotation changefeed.Rotation
	// Listing says what the Change List Index shows and how archives are paged.
	Listing changefeed.Listing
	// CacheBytes bounds the memory for rendered closed Change Lists; 0 means
	// DefaultCacheBytes, negative disables the cache (every GET streams).
	CacheBytes int64
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
	// LocalChanges, when set, counts the channel changes made in this
	// process (hub.Hub.ChannelChanges): the channel list is taken again
	// as soon as it moved, so a channel deleted through this process is
	// gone from its documents at once; changes made elsewhere show within
	// ChannelsTTL.
	LocalChanges func() uint64
	// Readers verifies the tokens of private channels' readers; nil
	// serves private channels to no one (private.go).
	Readers *access.Verifier
	// Refusals answers refused requests through the hub's refusal table
	// and counts them.
	Refusals hub.Refusals
}

// Pull derives pull-mode ResourceSync documents from the hub's log and
// serves them over HTTP. It is safe for concurrent use.
type Pull struct {
	log    hub.Log
	chans  ChannelLister
	cfg    Config
	base   string // BaseURL without a trailing slash
	logger *slog.Logger
	cache  *listCache
	gz     sync.Pool           // *gzip.Writer
	h      *loophealth.Tracker // reading the log and listing channels, when they fail

	syncMu sync.Mutex // serialises reading the log
	mu     sync.RWMutex
	idx    index

	chMu      sync.Mutex
	chList    []hub.Channel
	chByName  map[string]int // index in chList by name
	chGen     uint64         // counts the listings that differed from the one before
	chFetched time.Time
	chVer     string           // the lister's channels version before chList was taken; "" unknown
	chLocal   uint64           // Config.LocalChanges before chList was taken
	chClock   func() time.Time // time.Now; tests set another (SetClock), for listings and channel announcements
}

// New returns a Pull reading log, listing the channels of chans. It reads
// the log lazily: on each request for a changing document it first catches
// up with the log; Run keeps it caught up in the background.
func New(log hub.Log, chans ChannelLister, cfg Config) (*Pull, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pull: base URL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	if cfg.HubURL == "" {
		return nil, fmt.Errorf("pull: no hub URL")
	}
	cfg.Rotation = cfg.Rotation.Normalized()
	cfg.Listing = cfg.Listing.Normalized()
	cfg.CacheBytes = cmp.Or(cfg.CacheBytes, DefaultCacheBytes)
	lg := cfg.Logger
	lg = cmp.Or(lg, slog.Default())
	p := &Pull{
		log:    log,
		chans:  chans,
		cfg:    cfg,
		base:   strings.TrimSuffix(cfg.BaseURL, "/"),
		logger: lg.With("component", "pull"),
		cache:  newListCache(cfg.CacheBytes),
		idx:    newIndex(cfg.Rotation),
	}
	p.h = loophealth.New(p.logger)
	p.gz.New = func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
		return w
	}
	return p, nil
}

// Register adds the pull-mode routes to mux (see the package documentation
// for the layout). GET routes also answer HEAD.
func (p *Pull) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+wire.PatternSourceDescription, p.serveDescription)
	mux.HandleFunc("GET "+wire.PatternRobots, p.serveRobots)
	mux.HandleFunc("GET "+wire.PatternCapabilityList, p.serveCapabilityList)
	mux.HandleFunc("GET "+wire.PatternChangeList, p.serveOpenList)
	mux.HandleFunc("GET "+wire.PatternChangeListFile, p.serveList)
	mux.HandleFunc("GET "+wire.PatternChangeListIndex, p.serveIndex)
	mux.HandleFunc("GET "+wire.PatternChangeListArchive, p.serveArchive)
	mux.HandleFunc("GET "+wire.PatternChangeListArchivePage, p.serveArchivePage)
	p.registerAtom(mux)
}

// Run keeps the list index caught up with the log until ctx ends, waking on
// every append and every Poll (a safety net for a change signal lost while
// the connection to the log was down). It returns ctx's error.
//
// A log or store that fails does not end Run: it retries with backoff and
// goes on from the last record it applied, so no notification is left out
// of the lists; Health tells whether it is stalled. Meanwhile documents
// that need the log answer 503.
func (p *Pull) Run(ctx context.Context) error {
	poll := time.NewTicker(Poll)
	defer poll.Stop()
	for {
		if err := p.Sync(ctx); err != nil {
			// the retry's wait, cut short by an append (the log answers
			// again): readiness follows the log, not the retry's pace
			asked := false
			if _, err := logcache.Await(ctx, p.log, p.h.RetryIn(opSync, loophealth.EngineRetry), nil, func(bool) (bool, error) {
				again := asked
				asked = true
				return again, nil
			}); err != nil || ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		// every round contacts the lister (a version read at most every
		// ChannelsTTL), so that a listing a request saw fail is cleared
		// by the loop even when no request or record comes
		_, _ = p.channels(ctx, false)
		p.warmClosed(ctx)
		// wait for a record after those applied (a read that fails is
		// for the next Sync to report)
		after := p.applied()
		if _, err := logcache.Await(ctx, p.log, 0, poll.C, func(polled bool) (bool, error) {
			visible, err := logcache.Visible(ctx, p.log, after+1)
			return polled || visible || err != nil, nil
		}); err != nil {
			return err
		}
	}
}

// Health reports whether pull mode can read what it serves: false when
// catching up with the log or listing the channels has been failing since
// since, with the latest error. Run retries by itself; Health is for
// readiness checks. It does no I/O.
func (p *Pull) Health() (ok bool, since time.Time, err error) { return p.h.State() }

// Operations whose failures the health follows.
const (
	opSync     = "pull: catching up with the log"
	opChannels = "pull: listing channels"
)

// channels returns the channel list, refreshed after ChannelsTTL or when
// fresh is set.
func (p *Pull) channels(ctx context.Context, fresh bool) ([]hub.Channel, error) {
	list, _, err := p.listing(ctx, fresh)
	return list, err
}

// listing is channels with the generation of the list: it changes with
// every listing that differs from the one before, so a caller can skip
// work it did for the same list.
func (p *Pull) listing(ctx context.Context, fresh bool) ([]hub.Channel, uint64, error) {
	p.chMu.Lock()
	defer p.chMu.Unlock()
	now := p.clockLocked()
	local := p.localChanges()
	if !fresh && p.chList != nil && now().Sub(p.chFetched) < ChannelsTTL && local == p.chLocal {
		return p.chList, p.chGen, nil
	}
	ver := ""
	if vs, ok := p.chans.(hub.ChannelsVersioner); ok {
		// read before listing: a listing is never older than its version;
		// one that fails leaves the listing below to decide the outcome
		if v, err := vs.ChannelsVersion(ctx); err == nil {
			ver = v
		}
	}
	if ver != "" && ver == p.chVer && p.chList != nil {
		p.h.Report(ctx, opChannels, nil) // the lister answered: that is this contact's outcome
		p.chFetched, p.chLocal = now(), local
		return p.chList, p.chGen, nil // nothing changed: no listing to copy
	}
	list, err := p.chans.Channels(ctx)
	if err != nil {
		err = fmt.Errorf("pull: list channels: %w", err)
	}
	if p.h.Report(ctx, opChannels, err) != nil {
		return nil, 0, err
	}
	if list == nil {
		list = []hub.Channel{}
	}
	p.chFetched, p.chVer, p.chLocal = now(), ver, local
	if p.chList != nil && slices.Equal(list, p.chList) {
		// the same list: work done for this generation stays done
		return p.chList, p.chGen, nil
	}
	byName := make(map[string]int, len(list))
	for i, ch := range list {
		byName[ch.Name] = i
	}
	p.chList, p.chByName = list, byName
	p.chGen++
	return list, p.chGen, nil
}

// localChanges reads Config.LocalChanges (0 without it).
func (p *Pull) localChanges() uint64 {
	if p.cfg.LocalChanges == nil {
		return 0
	}
	return p.cfg.LocalChanges()
}

// clockLocked returns the clock of listings and channel announcements;
// the caller holds chMu.
func (p *Pull) clockLocked() func() time.Time {
	if p.chClock == nil {
		return time.Now
	}
	return p.chClock
}

// now reads the clock of listings and channel announcements.
func (p *Pull) now() time.Time {
	p.chMu.Lock()
	clock := p.clockLocked()
	p.chMu.Unlock()
	return clock()
}

// listed returns the channel named name in the last list taken, without
// I/O.
func (p *Pull) listed(name string) (hub.Channel, bool) {
	p.chMu.Lock()
	defer p.chMu.Unlock()
	i, ok := p.chByName[name]
	if !ok {
		return hub.Channel{}, false
	}
	return p.chList[i], true
}

// created returns when the channel name was created (zero when it is not
// listed any more), for a channel the index meets for the first time. When
// the channels cannot be listed it falls back on the last list it got, and
// fails only when that list does not have the channel.
func (p *Pull) created(ctx context.Context, name string) (time.Time, error) {
	ch, ok, err := p.channel(ctx, name)
	if err != nil {
		if ch, ok := p.listed(name); ok {
			return ch.Created, nil
		}
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, nil
	}
	return ch.Created, nil
}

// channel returns the channel named name, refreshing the list once when it
// is not known.
func (p *Pull) channel(ctx context.Context, name string) (hub.Channel, bool, error) {
	for _, fresh := range []bool{false, true} {
		if _, _, err := p.listing(ctx, fresh); err != nil {
			return hub.Channel{}, false, err
		}
		if ch, ok := p.listed(name); ok {
			return ch, true, nil
		}
	}
	return hub.Channel{}, false, nil
}
