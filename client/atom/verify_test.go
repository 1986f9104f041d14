package atom_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rshub/rshub/client/atom"
)

// origin is a Source on loopback: the feed documents by path, each
// resource's current body (absent: 404, or the status in status), and the
// GETs of resources it answered.
type origin struct {
	mu     sync.Mutex
	srv    *httptest.Server
	docs   map[string]string
	bodies map[string]string
	status map[string]int
	gets   map[string]int
}

func newOrigin(t *testing.T) *origin {
	o := &origin{docs: map[string]string{}, bodies: map[string]string{}, status: map[string]int{}, gets: map[string]int{}}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if d, ok := o.docs[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/atom+xml")
			io.WriteString(w, d)
			return
		}
		o.gets[r.URL.Path]++
		if code := o.status[r.URL.Path]; code != 0 {
			w.WriteHeader(code)
			return
		}
		b, ok := o.bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, b)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *origin) set(f func(o *origin)) { o.mu.Lock(); f(o); o.mu.Unlock() }

func (o *origin) resourceGets() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, c := range o.gets {
		n += c
	}
	return n
}

// change is one feed entry: path of the resource, second of its update,
// and whether it is a deletion; md, when set, is the rs:md's attributes.
type change struct {
	path    string
	sec     int
	deleted bool
	md      string
}

func (o *origin) entry(c change) string {
	id := o.srv.URL + c.path
	body := `<link rel="alternate" href="` + id + `"/>`
	if c.deleted {
		body = `<content/>`
	}
	if c.md != "" {
		body += `<rs:md ` + c.md + `/>`
	}
	return fmt.Sprintf(`<entry><id>%s</id><title>t</title><updated>2024-01-01T00:00:%02dZ</updated>%s</entry>`, id, c.sec, body)
}

// doc is a feed document listing cs (given oldest first, listed newest
// first), with a prev-archive link when prev is set.
func (o *origin) doc(prev string, cs ...change) string {
	var b strings.Builder
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom" xmlns:rs="http://www.openarchives.org/rs/terms/"><id>` + o.srv.URL + `/feed</id><title>f</title><updated>2024-01-02T00:00:00Z</updated><author><name>a</name></author>`)
	if prev != "" {
		b.WriteString(`<link rel="prev-archive" href="` + o.srv.URL + prev + `"/>`)
	}
	for i := len(cs) - 1; i >= 0; i-- {
		b.WriteString(o.entry(cs[i]))
	}
	b.WriteString(`</feed>`)
	return b.String()
}

func md5Of(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

func harvestDir(t *testing.T, o *origin, st atom.State, dir string) (atom.State, atom.Stats) {
	t.Helper()
	h, err := atom.New(atom.Config{Feed: o.srv.URL + "/feed", Client: o.srv.Client()}, st)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := h.Harvest(context.Background(), &atom.DirStore{Dir: dir, Base: o.srv.URL + "/", Client: o.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return h.State(), stats
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestHarvest_LiveResourceThatFailsIsRetriedNotDeleted: an active entry
// whose resource answers 404, 410 or 503 is not a deletion: the file the
// mirror holds stays, the entry is counted failed and kept pending, and the
// next harvest (with no new entry for it) fetches it again.
func TestHarvest_LiveResourceThatFailsIsRetriedNotDeleted(t *testing.T) {
	for _, code := range []int{http.StatusNotFound, http.StatusGone, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			o := newOrigin(t)
			dir := t.TempDir()
			o.set(func(o *origin) {
				o.bodies["/r/a"] = "v1"
				o.docs["/feed"] = o.doc("", change{path: "/r/a", sec: 1})
			})
			st, _ := harvestDir(t, o, atom.State{}, dir)
			file := filepath.Join(dir, "r", "a")
			if got := readFile(t, file); got != "v1" {
				t.Fatalf("first harvest: %q", got)
			}
			o.set(func(o *origin) {
				o.status["/r/a"] = code
				o.docs["/feed"] = o.doc("", change{path: "/r/a", sec: 1}, change{path: "/r/a", sec: 2})
			})
			st, stats := harvestDir(t, o, st, dir)
			if stats.Failed != 1 || stats.Put != 0 || stats.Deleted != 0 {
				t.Fatalf("harvest while the resource answers %d: %+v", code, stats)
			}
			if got := readFile(t, file); got != "v1" {
				t.Fatalf("the mirror's file after a %d: %q", code, got)
			}
			if r := st.Records[o.srv.URL+"/r/a"]; !r.Pending || r.Deleted {
				t.Fatalf("record after a %d: %+v", code, r)
			}
			o.set(func(o *origin) { o.status["/r/a"] = 0; o.bodies["/r/a"] = "v2" })
			st, stats = harvestDir(t, o, st, dir)
			if stats.Failed != 0 || stats.Put != 1 || readFile(t, file) != "v2" {
				t.Fatalf("retry: %+v, file %q", stats, readFile(t, file))
			}
			if r := st.Records[o.srv.URL+"/r/a"]; r.Pending {
				t.Fatalf("record after the retry: %+v", r)
			}
			if _, stats = harvestDir(t, o, st, dir); stats.Put+stats.Failed != 0 {
				t.Fatalf("harvest with nothing new: %+v", stats)
			}
		})
	}
}

// TestHarvest_BodyNotMatchingRsMdIsRefused: a body whose length or hash
// differs from the entry's rs:md is not stored (nothing written, the file
// held stays) and is retried; the matching body is then stored.
func TestHarvest_BodyNotMatchingRsMdIsRefused(t *testing.T) {
	good := "the announced body"
	for name, served := range map[string]string{
		"hash":   strings.ToUpper(good[:1]) + good[1:], // same length, other bytes
		"length": good + "!",
	} {
		t.Run(name, func(t *testing.T) {
			o := newOrigin(t)
			dir := t.TempDir()
			md := fmt.Sprintf(`change="created" hash="md5:%s" length="%d"`, md5Of(good), len(good))
			o.set(func(o *origin) {
				o.bodies["/r/a"] = served
				o.docs["/feed"] = o.doc("", change{path: "/r/a", sec: 1, md: md})
			})
			st, stats := harvestDir(t, o, atom.State{}, dir)
			file := filepath.Join(dir, "r", "a")
			if stats.Failed != 1 || stats.Put != 0 {
				t.Fatalf("tampered body: %+v", stats)
			}
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Fatalf("a body that does not match rs:md was written: %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "r", ".*")); len(left) != 0 {
				t.Fatalf("temporary files left: %v", left)
			}
			o.set(func(o *origin) { o.bodies["/r/a"] = good })
			_, stats = harvestDir(t, o, st, dir)
			if stats.Failed != 0 || stats.Put != 1 || readFile(t, file) != good {
				t.Fatalf("retry: %+v, file %q", stats, readFile(t, file))
			}
		})
	}
}

// TestHarvest_FirstHarvestFetchesOnlyTheNewestState: a feed whose archives
// hold many versions of each resource (the Source serves only the current
// one) costs one GET per live resource, none for a resource whose newest
// entry is a deletion, and no failure.
func TestHarvest_FirstHarvestFetchesOnlyTheNewestState(t *testing.T) {
	o := newOrigin(t)
	dir := t.TempDir()
	var old, mid, sub []change
	live := map[string]bool{}
	for i := range 6 {
		p := fmt.Sprintf("/r/%d", i)
		old = append(old, change{path: p, sec: i})
		mid = append(mid, change{path: p, sec: 10 + i}, change{path: p, sec: 20 + i, deleted: i%2 == 0})
		if i%3 != 0 { // recreated, updated again
			sub = append(sub, change{path: p, sec: 30 + i}, change{path: p, sec: 40 + i})
			live[p] = true
		} else if i%2 != 0 {
			live[p] = true // its last change is in the middle archive
		}
	}
	o.set(func(o *origin) {
		o.docs["/a/1"] = o.doc("", old...)
		o.docs["/a/2"] = o.doc("/a/1", mid...)
		o.docs["/feed"] = o.doc("/a/2", sub...)
		for p := range live {
			o.bodies[p] = "body of " + p
		}
	})
	st, stats := harvestDir(t, o, atom.State{}, dir)
	if got := o.resourceGets(); got != len(live) || stats.Failed != 0 || stats.Put != len(live) {
		t.Fatalf("%d resource GETs, stats %+v; want %d GETs and puts, no failure", got, stats, len(live))
	}
	if got := st.Live(); len(got) != len(live) {
		t.Fatalf("live records %v, want %d", got, len(live))
	}
	for p := range live {
		if got := readFile(t, filepath.Join(dir, filepath.FromSlash(p))); got != "body of "+p {
			t.Errorf("%s: %q", p, got)
		}
	}
}
