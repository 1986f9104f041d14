// Package source is a ResourceSync Source over a local directory: it polls
// the directory, announces the files that were created, updated or deleted
// as change notifications (with md5 and sha-256 hashes and lengths) to a
// hub through client/publisher, and serves the files, a Resource List, a
// Capability List and a Source Description over HTTP so destinations can
// discover the channel and fetch what changed.
//
// URL layout under the public URL:
//
//	/.well-known/resourcesync   Source Description (wire.PathWellKnown)
//	/<wire.CapabilityListFile>  Capability List: resourcelist, change-notification (topic, hub)
//	/resourcelist.xml           Resource List as of the last acknowledged notification (rs:md at)
//	/files/{path}               the files
//	/topic                      the topic URI (HEAD/GET: Link rel="self" and rel="hub"), unless Config.Topic is elsewhere
//	/status                     JSON: the notifications the hub acknowledged, scans
package source

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/wire"
)

// Config configures a Source.
type Config struct {
	Dir       string // the directory to publish
	PublicURL string // where the Source's HTTP server is reached, without trailing slash
	Hub       string // hub URL
	Topic     string // topic URI; default PublicURL + "/topic"
	Token     string // publisher token of the channel, if it has token trust
	Interval  time.Duration
	// StatePath, when set, keeps the publisher's position (from/until
	// continuity) across restarts; the directory is then rescanned and
	// compared with the last Resource List kept next to it.
	StatePath string
	Logger    *slog.Logger
	// OnPublish, when set, is told of every acknowledged notification.
	OnPublish func(Published)
	// OnRetry, when set, is told of every failed publish that is retried
	// (publisher.Config.OnRetry): the hub unreachable, or answering 5xx.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Published is one notification the hub acknowledged.
type Published struct {
	Seq     uint64    `json:"seq"`
	From    time.Time `json:"from"`
	Until   time.Time `json:"until"`
	Entries int       `json:"entries"`
	Changes []string  `json:"changes"` // "created a.txt", ...
}

// Source polls a directory and publishes its changes.
type Source struct {
	cfg Config
	pub *publisher.Publisher

	mu        sync.Mutex
	snapshot  map[string]file // as of the last acknowledged notification
	at        time.Time       // the until that snapshot corresponds to
	published []Published
	scans     int
	cleanScan time.Time // start of the last scan that found nothing to publish
	lastErr   string
}

// New returns a Source resuming from cfg.StatePath when it exists.
func New(ctx context.Context, cfg Config) (*Source, error) {
	if cfg.Dir == "" || cfg.PublicURL == "" || cfg.Hub == "" {
		return nil, errors.New("source: Dir, PublicURL and Hub are required")
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	cfg.Topic = cmp.Or(cfg.Topic, cfg.PublicURL+"/topic")
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	var store publisher.Store = &publisher.MemoryStore{}
	snap := map[string]file{}
	if cfg.StatePath != "" {
		store = publisher.FileStore{Path: cfg.StatePath + ".publisher"}
		var err error
		if snap, err = loadSnapshot(cfg.StatePath); err != nil {
			return nil, err
		}
	}
	pub, err := publisher.New(ctx, publisher.Config{
		Hub: cfg.Hub, Topic: cfg.Topic, CapabilityList: cfg.PublicURL + capabilityListPath, Token: cfg.Token,
		Store: store, Logger: cfg.Logger, OnRetry: cfg.OnRetry,
	})
	if err != nil {
		return nil, err
	}
	s := &Source{cfg: cfg, pub: pub, snapshot: snap, at: pub.Until()}
	if s.at.IsZero() {
		s.at = time.Now()
	}
	return s, nil
}

// Topic returns the topic URI.
func (s *Source) Topic() string { return s.cfg.Topic }

// Run scans every Interval until ctx ends.
func (s *Source) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := s.Scan(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("scan", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Scan compares the directory with the last published state and publishes
// the difference as one notification. It returns the number of changes.
func (s *Source) Scan(ctx context.Context) (int, error) {
	start := time.Now()
	s.mu.Lock()
	prev := s.snapshot
	s.mu.Unlock()
	cur, err := scanDir(s.cfg.Dir, prev, start)
	if err != nil {
		return 0, s.fail(err)
	}
	// a notification left pending by a failed publish goes first, unchanged
	fres, flushed, err := s.pub.Flush(ctx)
	if err != nil {
		return 0, s.fail(err)
	}
	if flushed {
		s.record(Published{Seq: fres.Seq, From: fres.Window.From, Until: fres.Window.Until, Changes: []string{"(sent again after a failure)"}})
	}
	changes, names := s.diff(prev, cur)
	if len(changes) == 0 {
		s.mu.Lock()
		s.scans++
		if !flushed {
			s.cleanScan = start
		}
		s.lastErr = ""
		s.mu.Unlock()
		return 0, nil
	}
	res, err := s.pub.Publish(ctx, changes)
	var he *publisher.HubError
	if errors.As(err, &he) {
		// refused: the changes are announced again at the next scan
		return 0, s.fail(err)
	}
	s.mu.Lock()
	s.snapshot = cur // sent, or pending in the publisher: either way announced
	s.scans++
	s.mu.Unlock()
	if err == nil {
		s.record(Published{Seq: res.Seq, From: res.Window.From, Until: res.Window.Until, Entries: len(changes), Changes: names})
	}
	if s.cfg.StatePath != "" {
		if serr := saveSnapshot(s.cfg.StatePath, cur); serr != nil {
			return len(changes), serr
		}
	}
	if err != nil {
		return len(changes), s.fail(err)
	}
	s.cfg.Logger.Info("published", "seq", res.Seq, "changes", len(changes), "until", res.Window.Until)
	return len(changes), nil
}

// record notes an acknowledged notification.
func (s *Source) record(p Published) {
	s.mu.Lock()
	s.at = later(s.at, p.Until)
	s.published = append(s.published, p)
	s.lastErr = ""
	s.mu.Unlock()
	if s.cfg.OnPublish != nil {
		s.cfg.OnPublish(p)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (s *Source) fail(err error) error {
	s.mu.Lock()
	s.lastErr = err.Error()
	s.mu.Unlock()
	return err
}

// diff lists the changes from prev to cur, deletions and creations in
// path order.
func (s *Source) diff(prev, cur map[string]file) ([]publisher.Change, []string) {
	var paths []string
	for p := range cur {
		paths = append(paths, p)
	}
	for p := range prev {
		if _, ok := cur[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []publisher.Change
	var names []string
	for _, p := range paths {
		c := publisher.Change{Loc: s.FileURL(p), Length: -1}
		old, had := prev[p]
		f, has := cur[p]
		switch {
		case !has:
			c.Change = changefeed.Deleted
		case !had:
			c.Change = changefeed.Created
		case old.MD5 != f.MD5 || old.SHA256 != f.SHA256:
			c.Change = changefeed.Updated
		default:
			continue
		}
		if has {
			c.Hash, c.Length, c.Type = f.hash(), f.Size, "application/octet-stream"
		}
		out = append(out, c)
		names = append(names, string(c.Change)+" "+p)
	}
	return out, names
}

// FileURL returns the URL a file is served at.
func (s *Source) FileURL(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = pathEscape(p)
	}
	return s.cfg.PublicURL + "/files/" + strings.Join(parts, "/")
}

// Status is what /status reports.
type Status struct {
	Topic     string      `json:"topic"`
	Published []Published `json:"published"`
	Scans     int         `json:"scans"`
	CleanScan time.Time   `json:"cleanScan"` // start of the last scan that found nothing new
	Until     time.Time   `json:"until"`     // until of the last acknowledged notification
	LastError string      `json:"lastError,omitempty"`
}

// Status returns the Source's progress.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Topic: s.cfg.Topic, Published: append([]Published(nil), s.published...), Scans: s.scans, CleanScan: s.cleanScan, Until: s.pub.Until(), LastError: s.lastErr}
}

// Handler serves the Source's documents and files.
func (s *Source) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+wire.PathWellKnown, s.serveDescription)
	mux.HandleFunc("GET "+capabilityListPath, s.serveCapabilityList)
	mux.HandleFunc("GET /resourcelist.xml", s.serveResourceList)
	mux.HandleFunc("GET /files/{path...}", s.serveFile)
	mux.HandleFunc("GET /topic", s.serveTopic)
	mux.HandleFunc("GET /status", s.serveStatus)
	return mux
}
