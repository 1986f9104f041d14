package mirror_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
)

// source is an in-memory Source: files served under /files/, changes
// published to a hub by client/publisher, each notification kept.
type source struct {
	mu    sync.Mutex
	files map[string][]byte
	srv   *httptest.Server
	pub   *publisher.Publisher
}

func newSource(t *testing.T, hubURL string) *source {
	s := &source{files: map[string][]byte{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.files[r.URL.Path[len("/files/"):]]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.srv.Close)
	var err error
	s.pub, err = publisher.New(context.Background(), publisher.Config{Hub: hubURL, Topic: hubURL + "topics/demo"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hashOf(b []byte) string {
	m, s := md5.Sum(b), sha256.Sum256(b)
	return "md5:" + hex.EncodeToString(m[:]) + " sha-256:" + hex.EncodeToString(s[:])
}

// change applies edits (nil content deletes) and publishes them as one
// notification, returning its Update.
func (s *source) change(t *testing.T, edits map[string][]byte) mirror.Update {
	t.Helper()
	var changes []publisher.Change
	s.mu.Lock()
	for name, content := range edits {
		c := publisher.Change{Loc: s.srv.URL + "/files/" + name, Length: -1}
		_, existed := s.files[name]
		switch {
		case content == nil:
			c.Change = changefeed.Deleted
			delete(s.files, name)
		case existed:
			c.Change = changefeed.Updated
		default:
			c.Change = changefeed.Created
		}
		if content != nil {
			s.files[name] = content
			c.Hash, c.Length = hashOf(content), int64(len(content))
		}
		changes = append(changes, c)
	}
	s.mu.Unlock()
	res, err := s.pub.Publish(context.Background(), changes)
	if err != nil {
		t.Fatal(err)
	}
	body, err := publisher.Build(res.Window, changes, "")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mirror.UpdateOf(doc, res.Seq, "test")
}

func (s *source) checkMirror(t *testing.T, dir string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	got := map[string][]byte{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			got[filepath.ToSlash(rel)], _ = os.ReadFile(p)
		}
		return nil
	})
	if len(got) != len(s.files) {
		t.Fatalf("mirror has %d files, Source %d: %v", len(got), len(s.files), keys(got))
	}
	for name, b := range s.files {
		if !bytes.Equal(got[name], b) {
			t.Fatalf("%s: mirror %q, Source %q", name, got[name], b)
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func startHub(t *testing.T) string {
	t.Helper()
	return servertest.Start(t, nil, func(c *server.Config) {
		c.LeaseMin, c.LeaseDefault, c.LeaseMax, c.PerHost, c.RotateEntries = 1, 3600, 86400, 4, 3
	}).HubURL
}

// TestApply_GapsHealFromTheHubsChangeLists gives the mirror only some of
// the notifications, out of order and repeated; the gaps are filled from
// the hub's Change Lists (cut every 3 entries, so closed lists, the index
// and the archive are all read) and the mirror ends equal to the Source.
func TestApply_GapsHealFromTheHubsChangeLists(t *testing.T) {
	hubURL := startHub(t)
	src := newSource(t, hubURL)
	dir := filepath.Join(t.TempDir(), "mirror")
	var events []mirror.Event
	m, err := mirror.Open(mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", BaseURL: src.srv.URL + "/files/",
		Events: func(e mirror.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ups []mirror.Update
	ups = append(ups, src.change(t, map[string][]byte{"a.txt": []byte("a1"), "d/b.txt": []byte("b1")}))
	ups = append(ups, src.change(t, map[string][]byte{"a.txt": []byte("a2")}))
	ups = append(ups, src.change(t, map[string][]byte{"c.txt": []byte("c1"), "d/b.txt": nil}))
	ups = append(ups, src.change(t, map[string][]byte{"e/f/g.txt": []byte("g1")}))
	ups = append(ups, src.change(t, map[string][]byte{"a.txt": nil, "c.txt": []byte("c2")}))
	// the mirror hears of the second and the last only, then a repeat
	for _, i := range []int{1, 4, 1, 4} {
		if err := m.Apply(ctx, ups[i]); err != nil {
			t.Fatal(err)
		}
	}
	src.checkMirror(t, dir)
	st := m.State()
	if !st.Until.Equal(ups[4].Until) || st.Seq != ups[4].Seq {
		t.Fatalf("state %+v, want until %v seq %d", st, ups[4].Until, ups[4].Seq)
	}
	gaps, dups := 0, 0
	for _, e := range events {
		switch e.Kind {
		case mirror.EventGap:
			gaps++
		case mirror.EventDuplicate:
			dups++
		}
	}
	if gaps != 2 || dups != 2 {
		t.Fatalf("%d gaps and %d duplicates, want 2 and 2", gaps, dups)
	}

	// a restart resumes; Sync after silent notifications catches up
	src.change(t, map[string][]byte{"h.txt": []byte("h1")})
	last := src.change(t, map[string][]byte{"h.txt": []byte("h2"), "e/f/g.txt": nil})
	m2, err := mirror.Open(mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", BaseURL: src.srv.URL + "/files/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	src.checkMirror(t, dir)
	if err := m2.Apply(ctx, last); err != nil {
		t.Fatal(err)
	}
	if st := m2.State(); !st.Until.Equal(last.Until) {
		t.Fatalf("until %v, want %v", st.Until, last.Until)
	}
}

// TestApply_BaselineFromResourceList starts an empty mirror from the
// Source's Resource List and then applies newer notifications.
func TestApply_BaselineFromResourceList(t *testing.T) {
	hubURL := startHub(t)
	src := newSource(t, hubURL)
	src.change(t, map[string][]byte{"a": []byte("1"), "b": []byte("2")})
	up := src.change(t, map[string][]byte{"b": nil, "c": []byte("3")})
	rl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src.mu.Lock()
		defer src.mu.Unlock()
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="resourcelist" at="%s"/>`, up.Until.Format(time.RFC3339Nano))
		for name, b := range src.files {
			fmt.Fprintf(w, `<url><loc>%s/files/%s</loc><rs:md hash="%s" length="%d"/></url>`, src.srv.URL, name, hashOf(b), len(b))
		}
		fmt.Fprint(w, `</urlset>`)
	}))
	defer rl.Close()
	dir := filepath.Join(t.TempDir(), "m")
	m, err := mirror.Open(mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", BaseURL: src.srv.URL + "/files/", ResourceList: rl.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	src.checkMirror(t, dir)
	next := src.change(t, map[string][]byte{"a": []byte("4")})
	if err := m.Apply(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	src.checkMirror(t, dir)
}

// A notification whose window is the one instant where the previous one
// ended ([P, P]: changes a Source made at that instant, published later)
// is applied, not taken for one already applied.
func TestApply_ANotificationOfTheInstantThePreviousEndedIsApplied(t *testing.T) {
	hubURL := startHub(t)
	src := newSource(t, hubURL)
	src.mu.Lock()
	src.files["a"], src.files["b"] = []byte("1"), []byte("2")
	src.mu.Unlock()
	dir := filepath.Join(t.TempDir(), "m")
	m, err := mirror.Open(mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", BaseURL: src.srv.URL + "/files/"})
	if err != nil {
		t.Fatal(err)
	}
	t0, t1 := "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"
	note := func(from, until, name string, seq uint64) mirror.Update {
		body := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md capability="change-notification" from="` + from + `" until="` + until + `"/><url><loc>` + src.srv.URL + `/files/` + name + `</loc><rs:md change="created" datetime="` + until + `"/></url></urlset>`
		doc, err := changefeed.Parse(strings.NewReader(body), changefeed.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return mirror.UpdateOf(doc, seq, "test")
	}
	ctx := context.Background()
	for i, u := range []mirror.Update{note(t0, t1, "a", 1), note(t1, t1, "b", 2)} {
		if err := m.Apply(ctx, u); err != nil {
			t.Fatalf("notification %d: %v", i, err)
		}
	}
	src.checkMirror(t, dir)
}
