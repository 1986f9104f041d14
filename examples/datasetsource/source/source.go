// Package source is an example RDF dataset Source laid out the way
// Timbuctoo, a ResourceSync Destination, imports datasets: it keeps a
// dataset (N-Quads, blank nodes included) in a directory, edits it at
// random (additions and retractions of quads), writes each edit as an
// N-Quads Unified Diff patch (.nqud: what `diff --unified=0` of the two
// sorted N-Quads files gives, dataset.Diff), announces each patch to a hub
// as a change notification (client/publisher), and serves over HTTP:
//
//	/.well-known/resourcesync            Source Description: the dataset's Capability List, rs:ln describedby
//	/robots.txt                          Sitemap lines: Source Description, Capability List, Resource List
//	/{name}/capabilitylist.xml           Capability List: rs:ln up, describedby (RDF/XML and N-Triples); resourcelist, changelist, change-notification
//	/{name}/description.xml              the dataset description, VoID-style RDF/XML
//	/{name}/description.nt               the same description as N-Triples
//	/{name}/resourcelist.xml             Resource List: the one file dataset.nq (rs:md at, hash, length, type)
//	/{name}/dataset.nq                   the current dataset, sorted canonical N-Quads
//	/{name}/changelist.xml               Change List: every patch, forward chronological (hash, length, type)
//	/{name}/changes/{n}.nqud             the patches ("0000000001.nqud"; patch 1 loads the initial dataset)
//	/{name}/topic                        the default topic URI (Link self, hub, resourcesync, describedby)
//	/status                              JSON: patches made and acknowledged
//
// Patch 1 adds the initial dataset to an empty store; applying the patches
// in order to an empty store gives the current dataset. Everything lives
// in Config.Dir, so a Source restarted on the same directory carries on
// where it stopped: same patches, same continuity with the hub, and the
// patches the hub never acknowledged announced again.
package source

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/publisher"
)

// Config configures a Source.
type Config struct {
	Dir       string // directory of the dataset, its patches and its state (required)
	PublicURL string // where the Source's HTTP server is reached (required)
	// Name is the dataset's path segment; default "dataset1".
	Name  string
	Hub   string // hub URL; "" publishes nothing (pull only)
	Topic string // topic URI; default PublicURL + "/{name}/topic"
	Token string // publisher token of the channel, if it has token trust
	// QuadsPerEdit is how many quads an edit adds or retracts; default 20.
	QuadsPerEdit int
	// Seed chooses the edits (edit k depends on Seed and k only); default 1.
	Seed uint64
	// Edits is how many edits Run makes in the Source's life (restarts
	// included); 0 means no limit.
	Edits int
	// Interval is the pause between two edits of Run; default 1 s.
	Interval time.Duration
	// Description is what the dataset description says; empty fields get
	// defaults.
	Description Description
	// Client is the publisher's HTTP client; nil means client/publisher's.
	Client *http.Client
	// Backoff is the publisher's retry schedule (client/publisher's
	// default when zero).
	Backoff publisher.Backoff
	Logger  *slog.Logger     // default: discard
	Now     func() time.Time // default time.Now
	// OnPublish, when set, is told of every patch the hub acknowledged.
	OnPublish func(Patch)
}

// Source keeps a dataset, edits it, and publishes its patches.
type Source struct {
	cfg  Config
	base string // PublicURL without a trailing slash, then "/" + Name
	pub  *publisher.Publisher

	editMu sync.Mutex // one edit at a time
	annMu  sync.Mutex // one announcement run at a time

	mu       sync.Mutex
	st       state
	cur      *dataset.Store // the current dataset; replaced, never changed in place
	export   []byte         // cur exported (dataset.nq)
	lastErr  string
	announce chan struct{} // wakes Run's announcer
}

// New opens the Source in cfg.Dir: it resumes from the state there, or
// starts a new dataset (patch 1: the initial dataset) when there is none.
func New(ctx context.Context, cfg Config) (*Source, error) {
	if cfg.Dir == "" || cfg.PublicURL == "" {
		return nil, errors.New("datasetsource: Dir and PublicURL are required")
	}
	if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("datasetsource: public URL %q is not an absolute http(s) URL", cfg.PublicURL)
	}
	cfg.Name = cmp.Or(cfg.Name, "dataset1")
	if !validName(cfg.Name) {
		return nil, fmt.Errorf("datasetsource: dataset name %q must be 1-64 characters of A-Z a-z 0-9 - _", cfg.Name)
	}
	if cfg.QuadsPerEdit <= 0 {
		cfg.QuadsPerEdit = 20
	}
	cfg.Seed = cmp.Or(cfg.Seed, 1)
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Description = cfg.Description.withDefaults()
	s := &Source{cfg: cfg, base: strings.TrimSuffix(cfg.PublicURL, "/") + "/" + cfg.Name, announce: make(chan struct{}, 1)}
	if cfg.Topic == "" {
		s.cfg.Topic = s.base + "/topic"
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, changesDir), 0o755); err != nil {
		return nil, fmt.Errorf("datasetsource: %w", err)
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	if cfg.Hub != "" {
		pub, err := publisher.New(ctx, publisher.Config{
			Hub: cfg.Hub, Topic: s.cfg.Topic, CapabilityList: s.CapabilityListURL(), Token: cfg.Token,
			Client: cfg.Client, Store: publisher.FileStore{Path: filepath.Join(cfg.Dir, publisherFile)},
			Backoff: cfg.Backoff, Now: cfg.Now, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("datasetsource: %w", err)
		}
		s.pub = pub
	}
	return s, nil
}

// open loads the state and rebuilds the dataset from the patches, or makes
// patch 1 from the initial dataset.
func (s *Source) open() error {
	st, ok, err := loadState(s.cfg.Dir)
	if err != nil {
		return err
	}
	if !ok {
		init, err := initialStore()
		if err != nil {
			return err
		}
		s.st = state{Seed: s.cfg.Seed}
		s.cur = &dataset.Store{}
		_, err = s.commit(s.cur, init)
		return err
	}
	if st.Seed != 0 && st.Seed != s.cfg.Seed {
		s.cfg.Logger.Warn("the directory was made with another seed; its seed goes on", "dir", s.cfg.Dir, "seed", st.Seed)
		s.cfg.Seed = st.Seed
	}
	cur := &dataset.Store{}
	for _, p := range st.Patches {
		data, err := readPatch(s.cfg.Dir, p)
		if err != nil {
			return err
		}
		if _, err := cur.ApplyPatch(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("datasetsource: patch %d: %w", p.N, err)
		}
	}
	var out bytes.Buffer
	if err := cur.Export(&out); err != nil {
		return fmt.Errorf("datasetsource: export: %w", err)
	}
	if err := writeAtomic(filepath.Join(s.cfg.Dir, datasetFile), out.Bytes()); err != nil {
		return err
	}
	s.st, s.cur, s.export = st, cur, out.Bytes()
	return nil
}

// commit writes the patch from cur to next, records it in the state (the
// commit point), then writes dataset.nq and makes next current.
func (s *Source) commit(cur, next *dataset.Store) (Patch, error) {
	s.mu.Lock()
	n := len(s.st.Patches) + 1
	at := s.cfg.Now().UTC().Truncate(time.Millisecond)
	if n > 1 {
		if last := s.st.Patches[n-2].Time; !at.After(last) {
			at = last.Add(time.Millisecond)
		}
	}
	s.mu.Unlock()
	body := dataset.Diff(cur, next)
	var patch bytes.Buffer
	fmt.Fprintf(&patch, "--- %s\t%s\n+++ %s\t%s\n", datasetFile, at.Add(-time.Millisecond).Format(time.RFC3339Nano), datasetFile, at.Format(time.RFC3339Nano))
	patch.WriteString(body)
	data := patch.Bytes()
	p := Patch{N: n, File: patchFile(n), Time: at, Hash: hashOf(data), Length: int64(len(data))}
	p.Adds, p.Retracts = countLines(data)
	if err := writeAtomic(filepath.Join(s.cfg.Dir, changesDir, p.File), data); err != nil {
		return Patch{}, err
	}
	var out bytes.Buffer
	if err := next.Export(&out); err != nil {
		return Patch{}, fmt.Errorf("datasetsource: export: %w", err)
	}
	s.mu.Lock()
	s.st.Patches = append(s.st.Patches, p)
	err := saveState(s.cfg.Dir, &s.st)
	if err != nil {
		s.st.Patches = s.st.Patches[:n-1]
		s.mu.Unlock()
		return Patch{}, err
	}
	s.cur, s.export = next, out.Bytes()
	s.mu.Unlock()
	if err := writeAtomic(filepath.Join(s.cfg.Dir, datasetFile), out.Bytes()); err != nil {
		return p, err // committed: dataset.nq is rebuilt at the next start
	}
	return p, nil
}

// Edit makes n edits, each QuadsPerEdit random additions and retractions
// written as one patch, and returns the patches. It does not wait for the
// hub: Announce (or Run) publishes them.
func (s *Source) Edit(ctx context.Context, n int) ([]Patch, error) {
	s.editMu.Lock()
	defer s.editMu.Unlock()
	var made []Patch
	for range n {
		if err := ctx.Err(); err != nil {
			return made, err
		}
		s.mu.Lock()
		cur, k := s.cur, len(s.st.Patches)+1
		s.mu.Unlock()
		add, retract, err := edit(cur, s.cfg.Seed, k, s.cfg.QuadsPerEdit)
		if err != nil {
			return made, err
		}
		next := clone(cur)
		for _, q := range retract {
			next.Retract(q)
		}
		for _, q := range add {
			next.Add(q)
		}
		p, err := s.commit(cur, next)
		if err != nil {
			return made, err
		}
		made = append(made, p)
		select {
		case s.announce <- struct{}{}:
		default:
		}
	}
	return made, nil
}

// clone returns a copy of st.
func clone(st *dataset.Store) *dataset.Store {
	var c dataset.Store
	for _, line := range st.Lines() {
		q, err := dataset.ParseQuad(line)
		if err == nil {
			c.Add(q)
		}
	}
	return &c
}

// Current returns a copy of the current dataset.
func (s *Source) Current() *dataset.Store {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	return clone(cur)
}

// Patches returns the patches made so far, in order.
func (s *Source) Patches() []Patch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Patch(nil), s.st.Patches...)
}
