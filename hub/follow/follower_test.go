package follow

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
)

// fakeHub stores what a follower publishes as the hub's log does: one
// notification per batch, the anchor moving to its until, a from before
// the anchor refused, a from after it recorded as a gap.
type fakeHub struct {
	mu     sync.Mutex
	anchor time.Time
	seq    uint64
	at     []changefeed.Entry // entries published at the anchor
	got    []string
	ids    []string // loc#hash of every entry published, in order
	all    []changefeed.Entry
	gaps   []hub.Gap
	traces []trace.SpanContext // the span of each publish's context
}

func (h *fakeHub) Continuity(context.Context, hub.Channel) (hub.ChannelState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return hub.ChannelState{LastUntil: h.anchor, LastSeq: h.seq}, nil
}

func (h *fakeHub) FollowAnchor(ctx context.Context, ch hub.Channel) (hub.ChannelState, []changefeed.Entry, bool, error) {
	st, _ := h.Continuity(ctx, ch)
	h.mu.Lock()
	defer h.mu.Unlock()
	return st, slices.Clone(h.at), true, nil
}

func (h *fakeHub) PublishFollowed(ctx context.Context, _ hub.Channel, f hub.Followed) (hub.PublishResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.traces = append(h.traces, trace.SpanContextFromContext(ctx))
	if len(f.Entries) == 0 {
		return hub.PublishResult{Unchanged: true, Seq: h.seq}, nil
	}
	if !h.anchor.IsZero() && f.From.Before(h.anchor) {
		return hub.PublishResult{}, fmt.Errorf("overlap: from %s before the anchor %s", f.From, h.anchor)
	}
	var gap *hub.Gap
	if !h.anchor.IsZero() && f.From.After(h.anchor) {
		gap = &hub.Gap{From: h.anchor, Until: f.From, Seq: h.seq + 1}
		h.gaps = append(h.gaps, *gap)
	}
	for _, e := range f.Entries {
		h.got = append(h.got, strings.TrimPrefix(e.Loc, "http://s.example/"))
		hash := ""
		if e.MD != nil {
			hash = e.MD.Hash
		}
		h.ids = append(h.ids, e.Loc+"#"+hash)
		h.all = append(h.all, e)
	}
	h.seq++
	if !f.Until.Equal(h.anchor) {
		h.at = nil
	}
	h.anchor = f.Until
	for _, e := range f.Entries {
		if changefeed.EntryTime(e).Equal(h.anchor) {
			h.at = append(h.at, e)
		}
	}
	return hub.PublishResult{Seq: h.seq, Gap: gap}, nil
}

func (h *fakeHub) published() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.got, " ")
}

type fakeStore struct{}

func (fakeStore) Channels(context.Context) ([]hub.Channel, error) { return nil, nil }
func (fakeStore) Claim(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}
func (fakeStore) Release(context.Context, string, string) error         { return nil }
func (fakeStore) PutFollowStatus(context.Context, string, []byte) error { return nil }
func (fakeStore) FollowStatus(context.Context, string) ([]byte, error) {
	return nil, hub.ErrNotFound
}
func (fakeStore) FollowStatuses(context.Context) (map[string][]byte, error) {
	return map[string][]byte{}, nil
}
func (fakeStore) DeleteFollowStatus(context.Context, string) error { return nil }

// docSource serves documents from a map, with ETags, 304s and faults.
type docSource struct {
	mu     sync.Mutex
	docs   map[string]string
	status int
	hits   map[string]int
	// conditional counts the GETs with If-None-Match or If-Modified-Since
	conditional map[string]int
	// served, when set, is called with each path served, after the
	// answer is written and the lock let go (it may set documents).
	served func(path string)
}

func (s *docSource) set(path, body string) {
	s.mu.Lock()
	s.docs[path] = body
	s.mu.Unlock()
}

func (s *docSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if fn := s.served; fn != nil {
		defer fn(r.URL.Path)
	}
	defer s.mu.Unlock()
	s.hits[r.URL.Path]++
	if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
		s.conditional[r.URL.Path]++
	}
	if s.status != 0 {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(s.status)
		return
	}
	body, ok := s.docs[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256([]byte(body))
	etag := fmt.Sprintf(`"%x"`, sum[:8])
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write([]byte(body))
}

func cl(from, until string, entries ...string) string {
	u := ""
	if until != "" {
		u = ` until="` + until + `"`
	}
	var b strings.Builder
	b.WriteString(rsHead + `<rs:md capability="changelist" from="` + from + `"` + u + `/>`)
	for _, e := range entries {
		loc, dt, _ := strings.Cut(e, "@")
		b.WriteString(`<url><loc>http://s.example/` + loc + `</loc><rs:md change="updated" datetime="` + dt + `"/></url>`)
	}
	return b.String() + `</urlset>`
}

func index(base string, lists ...[3]string) string {
	var b strings.Builder
	b.WriteString(idxHead + `<rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>`)
	for _, l := range lists {
		u := ""
		if l[2] != "" {
			u = ` until="` + l[2] + `"`
		}
		b.WriteString(`<sitemap><loc>` + base + l[0] + `</loc><rs:md capability="changelist" from="` + l[1] + `"` + u + `/></sitemap>`)
	}
	return b.String() + `</sitemapindex>`
}

type rig struct {
	src *docSource
	srv *httptest.Server
	hub *fakeHub
	e   *Engine
}

func newRig(t testing.TB) *rig {
	src := &docSource{docs: map[string]string{}, hits: map[string]int{}, conditional: map[string]int{}}
	srv := httptest.NewServer(src)
	t.Cleanup(srv.Close)
	h := &fakeHub{}
	e, err := New(Config{Hub: h, Store: fakeStore{}, Client: srv.Client(), Logger: slog.New(slog.DiscardHandler), Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{src: src, srv: srv, hub: h, e: e}
}

func (r *rig) follower() *follower {
	return newFollower(r.e, hub.Channel{Name: "c", Follow: r.srv.URL + "/idx.xml", PollInterval: "1s", Validation: hub.ValidationStrict})
}

const (
	t0 = "2024-01-01T00:00:00Z"
	t1 = "2024-01-01T00:00:01Z"
	t2 = "2024-01-01T00:00:02Z"
	t3 = "2024-01-01T00:00:03Z"
	t4 = "2024-01-01T00:00:04Z"
)

func TestFollower_ReadsAClosedListToItsEndBeforeTheNextOne(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.src.set("/idx.xml", index(r.srv.URL, [3]string{"/1.xml", t0, ""}))
	r.src.set("/1.xml", cl(t0, "", "a@"+t1))
	f := r.follower()
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	// between two polls list 1 grows, closes, and list 2 opens
	r.src.set("/1.xml", cl(t0, t3, "a@"+t1, "b@"+t2, "c@"+t3))
	r.src.set("/2.xml", cl(t3, "", "d@"+t4))
	r.src.set("/idx.xml", index(r.srv.URL, [3]string{"/1.xml", t0, t3}, [3]string{"/2.xml", t3, ""}))
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	want := "a b c d"
	if got := r.hub.published(); got != want {
		t.Fatalf("published %s, want %s", got, want)
	}
	// nothing new: the index and the open list answer 304, the closed list is not read again
	before := r.src.hits["/1.xml"]
	if err := f.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if f.fetch.notModified != 2 || r.src.hits["/1.xml"] != before {
		t.Errorf("idle poll: %d answered 304 (want 2), closed list read %d more times", f.fetch.notModified, r.src.hits["/1.xml"]-before)
	}
	// a restarted follower (no memory) starts from the anchor: closed
	// lists ending at or before it are not read, nothing is repeated
	g := r.follower()
	before = r.src.hits["/1.xml"]
	if err := g.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.hub.published(); got != want || r.src.hits["/1.xml"] != before {
		t.Errorf("after a restart: published %s; closed list read %d times", got, r.src.hits["/1.xml"]-before)
	}
}

func TestFollower_BacksOffOnErrorsAndHonoursRetryAfter(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	r.src.set("/idx.xml", index(r.srv.URL))
	r.src.status = http.StatusInternalServerError
	f := r.follower()
	timing := Timing{Interval: time.Second, MaxBackoff: time.Minute, MaxWait: time.Minute}
	var got []time.Duration
	for range 3 {
		d, _ := f.turn(ctx, timing)
		got = append(got, d)
	}
	if got[0] != 7*time.Second || got[1] != 7*time.Second || got[2] != 8*time.Second {
		t.Errorf("delays after failures %v, want Retry-After 7s, 7s, then backoff 8s", got)
	}
	r.src.status = 0
	if d, _ := f.turn(ctx, timing); d != time.Second || f.status().Failures != 0 || f.status().Errors != 3 {
		t.Errorf("after recovery: delay %s, status %+v", d, f.status())
	}
}
