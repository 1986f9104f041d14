package staticsource

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fileSource is a Source that writes static files, as a script next to a
// web server does: resources under res/, a Change List Index (index.xml)
// and its Change Lists, each change appended to the open list with its
// time to the second, its md5 and length; a full open list closes (its
// until the current second) and a new one opens. Every file is replaced
// whole (written beside, renamed, its mtime then set to the time it became
// visible), so a reader never sees half a file. It keeps what it wrote, to
// compare with what the hub published.
type fileSource struct {
	t           *testing.T
	dir         string
	base        string // the server's URL
	rotateEvery int

	mu        sync.Mutex
	rng       *rand.Rand
	lists     []*fileList
	versions  map[int]int // resource number -> version; absent: deleted or never made
	resources int         // resource numbers handed out
	changes   int         // changes written
	rewrites  int         // same-size rewrites of the open list's last change
	rotations int
	ids       map[string]bool // every change written (id)
	stopped   bool            // quiet: no more writes
}

type fileList struct {
	path        string
	from, until time.Time
	entries     []fileEntry
}

type fileEntry struct {
	res          int
	change, hash string
	length       int
	at           time.Time
}

// id names a change as a published entry does: loc, change and hash.
func (s *fileSource) id(e fileEntry) string {
	return s.loc(e.res) + " " + e.change + " " + e.hash
}

func (s *fileSource) loc(res int) string { return fmt.Sprintf("%s/res/r%05d.txt", s.base, res) }

func newFileSource(t *testing.T, dir string, rotateEvery int, seed uint64) *fileSource {
	s := &fileSource{t: t, dir: dir, rotateEvery: rotateEvery, rng: rand.New(rand.NewPCG(seed, 43)),
		versions: map[int]int{}, ids: map[string]bool{}}
	if err := os.MkdirAll(filepath.Join(dir, "res"), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// start writes the index and its first, empty, open list, once the
// server's URL is known.
func (s *fileSource) start(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.base = base
	s.open(now())
	s.writeIndex()
}

func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// open starts a new, empty, open list from the given second.
func (s *fileSource) open(from time.Time) {
	s.lists = append(s.lists, &fileList{path: fmt.Sprintf("changelist-%05d.xml", len(s.lists)+1), from: from})
	s.writeList(s.lists[len(s.lists)-1])
}

// change writes one change of a resource (a creation, an update or a
// deletion) and appends it to the open list; a list that is full then
// closes and a new one opens, in the same instant.
func (s *fileSource) change() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	cur := s.lists[len(s.lists)-1]
	var e fileEntry
	switch p := s.rng.Float64(); {
	case p < 0.12 && len(s.versions) > 0:
		e = fileEntry{res: s.pick(), change: "deleted", length: -1}
		delete(s.versions, e.res)
		if err := os.Remove(s.resPath(e.res)); err != nil {
			s.t.Error(err)
		}
	case p < 0.45 && len(s.versions) > 0:
		e = s.writeResource(s.pick(), "updated")
	default:
		s.resources++
		e = s.writeResource(s.resources, "created")
	}
	e.at = now()
	cur.entries = append(cur.entries, e)
	s.changes++
	s.ids[s.id(e)] = true
	s.writeList(cur)
	if len(cur.entries) >= s.rotateEvery {
		// one instant: the new list begins where the closed one ends (two
		// clock reads could straddle a second, a gap between the lists the
		// hub would rightly report)
		cur.until = now()
		s.writeList(cur)
		s.rotations++
		s.open(cur.until)
		s.writeIndex()
	}
}

// rewrite writes the resource of the open list's last change again, with
// content of the same size, and rewrites that entry in place as the
// resource's latest change: the list keeps its size. It reports false
// when the open list's last change cannot be rewritten (none, a deletion).
func (s *fileSource) rewrite() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return true
	}
	cur := s.lists[len(s.lists)-1]
	if len(cur.entries) == 0 || cur.entries[len(cur.entries)-1].change == "deleted" {
		return false
	}
	last := &cur.entries[len(cur.entries)-1]
	e := s.writeResource(last.res, last.change)
	e.at = now()
	*last = e
	s.changes++
	s.rewrites++
	s.ids[s.id(e)] = true
	s.writeList(cur)
	return true
}

// pick returns an existing resource, at random.
func (s *fileSource) pick() int {
	for {
		if r := 1 + s.rng.IntN(s.resources); s.versions[r] > 0 {
			return r
		}
	}
}

func (s *fileSource) resPath(res int) string {
	return filepath.Join(s.dir, "res", fmt.Sprintf("r%05d.txt", res))
}

// writeResource writes a new version of a resource: every version of
// every resource has the same size.
func (s *fileSource) writeResource(res int, change string) fileEntry {
	s.versions[res]++
	body := fmt.Sprintf("resource %05d version %06d\n", res, s.versions[res])
	s.replace(s.resPath(res), body)
	sum := md5.Sum([]byte(body))
	return fileEntry{res: res, change: change, hash: "md5:" + hex.EncodeToString(sum[:]), length: len(body)}
}

// quiet stops the Source's writes; it returns how many changes it wrote,
// how many of them were same-size rewrites, and how many lists it closed.
func (s *fileSource) quiet() (changes, rewrites, rotations int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	return s.changes, s.rewrites, s.rotations
}

// openPath is the path of the open list, as a server logs it.
func (s *fileSource) openPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "/" + s.lists[len(s.lists)-1].path
}

// count returns how many changes the Source wrote and how many lists it
// closed so far.
func (s *fileSource) count() (changes, rotations int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes, s.rotations
}

// final is what the Source's lists hold: every change the hub must
// publish, in order.
func (s *fileSource) final() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lists {
		for _, e := range l.entries {
			out = append(out, s.id(e))
		}
	}
	return out
}

func (s *fileSource) wrote(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id]
}

func (s *fileSource) writeIndex() {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="changelist" from="` + stamp(s.lists[0].from) + `"/>
`)
	for _, l := range s.lists {
		b.WriteString(`<sitemap><loc>` + s.base + "/" + l.path + `</loc><rs:md capability="changelist" from="` + stamp(l.from) + `"` + until(l) + `/></sitemap>` + "\n")
	}
	b.WriteString("</sitemapindex>\n")
	s.replace(filepath.Join(s.dir, "index.xml"), b.String())
}

func (s *fileSource) writeList(l *fileList) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="changelist" from="` + stamp(l.from) + `"` + until(l) + `/>
`)
	for _, e := range l.entries {
		md := `change="` + e.change + `" datetime="` + stamp(e.at) + `"`
		if e.change != "deleted" {
			md += fmt.Sprintf(` hash="%s" length="%d"`, e.hash, e.length)
		}
		b.WriteString(`<url><loc>` + s.loc(e.res) + `</loc><rs:md ` + md + `/></url>` + "\n")
	}
	b.WriteString("</urlset>\n")
	s.replace(filepath.Join(s.dir, l.path), b.String())
}

// replace replaces the file at path whole: written beside it, renamed over
// it, its mtime then set to now, the time the new content became visible
// (a rename keeps the mtime of the write, which may be in an earlier
// second than a read of the old content that a server stamped).
func (s *fileSource) replace(path, body string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		s.t.Error(err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		s.t.Error(err)
		return
	}
	n := time.Now()
	if err := os.Chtimes(path, n, n); err != nil {
		s.t.Error(err)
	}
}

func until(l *fileList) string {
	if l.until.IsZero() {
		return ""
	}
	return ` until="` + stamp(l.until) + `"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
