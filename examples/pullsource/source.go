// Package pullsource is a ResourceSync Source that only serves pull-mode
// documents: a Source Description at /.well-known/resourcesync, a
// Capability List, a Change List Index and Change Lists that rotate every
// RotateEvery changes (closed lists get their until and never change
// again). It sends no notification: a hub has to follow it. Tests use it
// to check that the hub's follower loses nothing across rotations, Source
// restarts and Source errors; Fault makes it answer 5xx, hang or send
// garbage.
//
// Every response has an ETag and a Last-Modified and answers a matching
// conditional GET with 304; the Source counts requests and bytes sent.
// The resources themselves are served at /res-N (deleted ones answer 404),
// so a destination can mirror them.
package pullsource

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// Fault is how the Source misbehaves.
type Fault int

// Faults.
const (
	FaultNone    Fault = iota
	Fault5xx           // 503 with Retry-After: 0 on every request
	FaultTimeout       // hold every request until the client gives up
	FaultGarbage       // 200 with a body that is not XML
)

// Change is one change of the Source's history.
type Change struct {
	Loc      string
	Change   changefeed.Change
	DateTime time.Time
}

// Config configures a Source.
type Config struct {
	// RotateEvery is the number of changes in a Change List before it is
	// closed (default 5).
	RotateEvery int
	// Start is the time of the Source's first list (default 2024-01-01).
	Start time.Time
	// OmitFrom leaves out the root from of every Change List (a Source a
	// hub can follow in lenient validation mode only).
	OmitFrom bool
}

// Source is the test Source. It is safe for concurrent use.
type Source struct {
	cfg Config

	mu       sync.Mutex
	base     string
	history  []Change
	starts   []int // index in history of each list's first change
	fault    Fault
	requests int
	bytes    int
}

// New returns a Source with no changes and one open, empty Change List.
func New(cfg Config) *Source {
	if cfg.RotateEvery <= 0 {
		cfg.RotateEvery = 5
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return &Source{cfg: cfg, starts: []int{0}}
}

// SetBase sets the absolute URL the Source's documents are served at,
// without a trailing slash (for example an httptest server's URL).
func (s *Source) SetBase(base string) {
	s.mu.Lock()
	s.base = strings.TrimSuffix(base, "/")
	s.mu.Unlock()
}

// SetFault makes the Source misbehave (FaultNone: behave).
func (s *Source) SetFault(f Fault) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// Change adds n changes (one second apart, after the last) to resources
// res-0 … res-9, created first, then updated, every seventh deleted, and
// rotates the open list every RotateEvery changes.
func (s *Source) Change(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		i := len(s.history)
		res := fmt.Sprintf("res-%d", i%10)
		kind := changefeed.Updated
		switch {
		case i < 10:
			kind = changefeed.Created
		case i%7 == 0:
			kind = changefeed.Deleted
		}
		if i%cfgOr(s.cfg.RotateEvery) == 0 && i > 0 {
			s.starts = append(s.starts, i)
		}
		s.history = append(s.history, Change{Loc: res, Change: kind, DateTime: s.cfg.Start.Add(time.Duration(i+1) * time.Second)})
	}
}

func cfgOr(n int) int { return max(n, 1) }

// contentOf is the body of a resource after change i of the history.
func contentOf(loc string, i int) []byte {
	return []byte(fmt.Sprintf("%s, version %d\n", loc, i))
}

// Files returns the Source's resources as they are now: relative location
// (res-N) to content; deleted resources are absent.
func (s *Source) Files() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]byte{}
	for i, c := range s.history {
		if c.Change == changefeed.Deleted {
			delete(out, c.Loc)
			continue
		}
		out[c.Loc] = contentOf(c.Loc, i)
	}
	return out
}

// resource answers a resource's current content; ok is false for a path
// that is no resource or one deleted.
func (s *Source) resource(path string) ([]byte, bool) {
	name := strings.TrimPrefix(path, "/")
	if !strings.HasPrefix(name, "res-") {
		return nil, false
	}
	b, ok := s.Files()[name]
	return b, ok
}

// History returns every change so far, with absolute locations.
func (s *Source) History() []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Change, len(s.history))
	for i, c := range s.history {
		c.Loc = s.base + "/" + c.Loc
		out[i] = c
	}
	return out
}

// Stats returns the requests served and the body bytes sent.
func (s *Source) Stats() (requests, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.bytes
}

// Lists returns the number of Change Lists (closed and open).
func (s *Source) Lists() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.starts)
}

// ServeHTTP serves the documents.
func (s *Source) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	fault := s.fault
	s.mu.Unlock()
	switch fault {
	case Fault5xx:
		w.Header().Set("Retry-After", "0")
		http.Error(w, "the Source is down", http.StatusServiceUnavailable)
		return
	case FaultTimeout:
		<-r.Context().Done()
		return
	case FaultGarbage:
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte("\x00\x01 this is not <xml"))
		return
	}
	if content, ok := s.resource(r.URL.Path); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		s.mu.Lock()
		s.bytes += len(content)
		s.mu.Unlock()
		_, _ = w.Write(content)
		return
	}
	body, closed, ok := s.document(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", s.cfg.Start.Format(http.TimeFormat))
	w.Header().Set("Content-Type", "application/xml")
	if closed {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "max-age=0")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.mu.Lock()
	s.bytes += len(body)
	s.mu.Unlock()
	_, _ = w.Write(body)
}

// document renders the document at path and reports whether it is a
// closed list.
func (s *Source) document(path string) (body []byte, closed, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
	switch path {
	case "/.well-known/resourcesync":
		fmt.Fprintf(&b, `<urlset %s><rs:md capability="description"/><url><loc>%s/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url></urlset>`, ns, s.base)
		return b.Bytes(), false, true
	case "/capabilitylist.xml":
		fmt.Fprintf(&b, `<urlset %s><rs:ln rel="up" href="%s/.well-known/resourcesync"/><rs:md capability="capabilitylist"/><url><loc>%s/changelist-index.xml</loc><rs:md capability="changelist"/></url></urlset>`, ns, s.base, s.base)
		return b.Bytes(), false, true
	case "/changelist-index.xml":
		fmt.Fprintf(&b, `<sitemapindex %s><rs:ln rel="up" href="%s/capabilitylist.xml"/><rs:md capability="changelist" from="%s"/>`, ns, s.base, fmtT(s.cfg.Start))
		for k := range s.starts {
			from, until := s.window(k)
			fmt.Fprintf(&b, `<sitemap><loc>%s/changelist/%05d.xml</loc><rs:md capability="changelist" from="%s"%s/></sitemap>`, s.base, k+1, fmtT(from), untilAttr(until))
		}
		b.WriteString(`</sitemapindex>`)
		return b.Bytes(), false, true
	}
	var k int
	if _, err := fmt.Sscanf(path, "/changelist/%05d.xml", &k); err != nil || k < 1 || k > len(s.starts) {
		return nil, false, false
	}
	k--
	from, until := s.window(k)
	fromAttr := ` from="` + fmtT(from) + `"`
	if s.cfg.OmitFrom {
		fromAttr = ""
	}
	fmt.Fprintf(&b, `<urlset %s><rs:ln rel="up" href="%s/capabilitylist.xml"/><rs:md capability="changelist"%s%s/>`, ns, s.base, fromAttr, untilAttr(until))
	for _, c := range s.history[s.starts[k]:s.end(k)] {
		fmt.Fprintf(&b, "\n<url><loc>%s/%s</loc><rs:md change=\"%s\" datetime=\"%s\"/></url>", s.base, c.Loc, c.Change, fmtT(c.DateTime))
	}
	b.WriteString("\n</urlset>")
	return b.Bytes(), !until.IsZero(), true
}

// end is the index after list k's last change.
func (s *Source) end(k int) int {
	if k+1 < len(s.starts) {
		return s.starts[k+1]
	}
	return len(s.history)
}

// window is list k's from and until (zero while open): a list starts
// where the one before ended, and a closed list ends at its last change.
func (s *Source) window(k int) (from, until time.Time) {
	from = s.cfg.Start
	if k > 0 {
		from = s.history[s.starts[k]-1].DateTime
	}
	if k+1 < len(s.starts) {
		until = s.history[s.starts[k+1]-1].DateTime
	}
	return from, until
}

func untilAttr(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ` until="` + fmtT(t) + `"`
}

func fmtT(t time.Time) string { return t.UTC().Format(time.RFC3339) }
