package follow

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// A Source deployed as static files behind a plain web server, whose clock
// has a resolution of one second: the server stamps each answer with Date
// and Last-Modified (the file's mtime) to the second, and answers a
// conditional GET as the server it imitates does.

// serverKind is the static-file server a staticSource imitates.
type serverKind int

const (
	// pythonServer is `python3 -m http.server`: Last-Modified only; 304
	// when If-Modified-Since is at or after the mtime.
	pythonServer serverKind = iota
	// nginxETagOff is nginx with `etag off`: Last-Modified only; 304 when
	// If-Modified-Since equals the mtime (if_modified_since exact).
	nginxETagOff
	// nginxDefault is nginx as installed: also an ETag built from the
	// mtime and the size ("mtime-size" in hex), so a rewrite of the same
	// size in the same second keeps its ETag; 304 when every condition
	// sent holds.
	nginxDefault
)

func (k serverKind) String() string {
	return [...]string{"python http.server", "nginx etag off", "nginx"}[k]
}

// staticFile is a file as the server sees it: its bytes and mtime.
type staticFile struct {
	body  []byte
	mtime time.Time // whole seconds
}

// staticSource serves files from memory with a clock of whole seconds the
// test moves; after each answer, hook (when set) runs with the lock let go
// and may write files and move the clock: writes inside the second, and
// between the reads, of a poll.
type staticSource struct {
	kind serverKind

	mu    sync.Mutex
	sec   int64 // the clock, Unix seconds
	files map[string]staticFile
	hook  func()
}

func newStaticSource(kind serverKind) *staticSource {
	return &staticSource{kind: kind, sec: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), files: map[string]staticFile{}}
}

// now is the Source's clock.
func (s *staticSource) now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Unix(s.sec, 0).UTC()
}

// tick moves the clock on by n seconds.
func (s *staticSource) tick(n int64) {
	s.mu.Lock()
	s.sec += n
	s.mu.Unlock()
}

// write replaces a file, stamped with the clock's second.
func (s *staticSource) write(path, body string) {
	s.mu.Lock()
	s.files[path] = staticFile{body: []byte(body), mtime: time.Unix(s.sec, 0).UTC()}
	s.mu.Unlock()
}

func (s *staticSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if hook := s.hook; hook != nil {
		defer hook()
	}
	defer s.mu.Unlock()
	w.Header().Set("Date", time.Unix(s.sec, 0).UTC().Format(http.TimeFormat))
	f, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	lm := f.mtime.Format(http.TimeFormat)
	etag := fmt.Sprintf(`"%x-%x"`, f.mtime.Unix(), len(f.body))
	w.Header().Set("Last-Modified", lm)
	if s.kind == nginxDefault {
		w.Header().Set("ETag", etag)
	}
	if s.notModified(r, f, lm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(f.body)
}

// notModified answers a conditional GET as the imitated server does.
func (s *staticSource) notModified(r *http.Request, f staticFile, lm, etag string) bool {
	ims, inm := r.Header.Get("If-Modified-Since"), r.Header.Get("If-None-Match")
	switch s.kind {
	case pythonServer:
		t, err := http.ParseTime(ims)
		return inm == "" && ims != "" && err == nil && !f.mtime.After(t)
	case nginxETagOff:
		return ims != "" && ims == lm
	default:
		if ims == "" && inm == "" {
			return false
		}
		return (ims == "" || ims == lm) && (inm == "" || inm == etag || inm == "W/"+etag)
	}
}

// changeListSource writes a Change List Index and its lists into a
// staticSource as a Source writing static files does: every change is
// appended to the open list, stamped with the clock's second; every
// rotateEvery changes the open list closes (its until the clock's second)
// and a new one opens. It keeps what it wrote, to compare with what a
// follower published.
type changeListSource struct {
	src         *staticSource
	base        string
	rotateEvery int

	lists   []*srcList
	n       int      // changes written
	written []string // every change written, in order, as published (loc#hash)
}

type srcList struct {
	path        string
	from, until time.Time
	entries     []srcEntry
}

type srcEntry struct {
	loc, hash string
	at        time.Time
}

func newChangeListSource(src *staticSource, base string, rotateEvery int) *changeListSource {
	c := &changeListSource{src: src, base: base, rotateEvery: rotateEvery}
	c.open()
	c.flush(true)
	return c
}

// open starts a new open list at the clock's second.
func (c *changeListSource) open() {
	c.lists = append(c.lists, &srcList{path: fmt.Sprintf("/changelist-%05d.xml", len(c.lists)+1), from: c.src.now()})
}

// add appends a change to the open list, rotating first when it is full.
func (c *changeListSource) add() {
	cur := c.lists[len(c.lists)-1]
	rotated := false
	if len(cur.entries) >= c.rotateEvery {
		cur.until = c.src.now()
		c.flushList(cur)
		c.open()
		cur, rotated = c.lists[len(c.lists)-1], true
	}
	c.n++
	e := srcEntry{loc: fmt.Sprintf("http://s.example/r%05d", c.n), hash: fmt.Sprintf("md5:%032x", c.n), at: c.src.now()}
	cur.entries = append(cur.entries, e)
	c.written = append(c.written, e.loc+"#"+e.hash)
	c.flush(rotated)
}

// rewriteLast rewrites the open list's last change as another change of
// the same resource with the same size (its hash only differs), as a Source
// that keeps the latest change of each resource does. It returns false when
// the open list is empty.
func (c *changeListSource) rewriteLast() bool {
	cur := c.lists[len(c.lists)-1]
	if len(cur.entries) == 0 {
		return false
	}
	c.n++
	last := &cur.entries[len(cur.entries)-1]
	last.hash, last.at = fmt.Sprintf("md5:%032x", c.n), c.src.now()
	c.written = append(c.written, last.loc+"#"+last.hash)
	c.flush(false)
	return true
}

// final is what the Source's lists hold when it stops: every change a
// follower must publish, in order (loc#hash).
func (c *changeListSource) final() []string {
	var out []string
	for _, l := range c.lists {
		for _, e := range l.entries {
			out = append(out, e.loc+"#"+e.hash)
		}
	}
	return out
}

// flush writes the open list, and the index when it changed.
func (c *changeListSource) flush(index bool) {
	c.flushList(c.lists[len(c.lists)-1])
	if index {
		var b strings.Builder
		b.WriteString(idxHead + `<rs:md capability="changelist" from="` + stamp(c.lists[0].from) + `"/>`)
		for _, l := range c.lists {
			u := ""
			if !l.until.IsZero() {
				u = ` until="` + stamp(l.until) + `"`
			}
			b.WriteString(`<sitemap><loc>` + c.base + l.path + `</loc><rs:md capability="changelist" from="` + stamp(l.from) + `"` + u + `/></sitemap>`)
		}
		b.WriteString(`</sitemapindex>`)
		c.src.write("/index.xml", b.String())
	}
}

func (c *changeListSource) flushList(l *srcList) {
	u := ""
	if !l.until.IsZero() {
		u = ` until="` + stamp(l.until) + `"`
	}
	var b strings.Builder
	b.WriteString(rsHead + `<rs:md capability="changelist" from="` + stamp(l.from) + `"` + u + `/>`)
	for _, e := range l.entries {
		b.WriteString(`<url><loc>` + e.loc + `</loc><rs:md change="updated" datetime="` + stamp(e.at) + `" hash="` + e.hash + `"/></url>`)
	}
	b.WriteString(`</urlset>`)
	c.src.write(l.path, b.String())
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
