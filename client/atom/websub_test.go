package atom_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gofeed "github.com/mmcdole/gofeed/atom"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/atom"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// atomSubscriber is a plain WebSub subscriber of a feed URL: it echoes the
// challenge of its topic, verifies X-Hub-Signature over the body, parses
// each pushed Atom document with gofeed and with client/atom, and keeps
// the state the documents say (newest change per resource).
type atomSubscriber struct {
	t      *testing.T
	topic  string
	hub    string
	secret string
	srv    *httptest.Server

	mu       sync.Mutex
	verified bool
	lastSeq  uint64
	docs     map[uint64][]string // entry ids per log sequence, as sent (newest first)
	state    map[string]bool     // resource -> live
	problems []string
}

func newAtomSubscriber(t *testing.T, hubURL, topic string) *atomSubscriber {
	s := &atomSubscriber{t: t, topic: topic, hub: hubURL, secret: "s3cret", docs: map[uint64][]string{}, state: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *atomSubscriber) fail(format string, args ...any) {
	s.mu.Lock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *atomSubscriber) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		if q.Get("hub.mode") != "subscribe" || q.Get("hub.topic") != s.topic {
			s.fail("verification %v", q)
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.verified = true
		s.mu.Unlock()
		_, _ = io.WriteString(w, q.Get("hub.challenge"))
		return
	}
	body, _ := io.ReadAll(r.Body)
	if err := wire.Verify(r.Header.Get(wire.HeaderSignature), s.secret, body); err != nil {
		s.fail("signature: %v", err)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != wire.MediaTypeAtom {
		s.fail("Content-Type %q", ct)
	}
	links := wire.ParseLinks(r.Header.Values(wire.HeaderLink))
	if !hasLink(links, wire.RelSelf, s.topic) || !hasLink(links, wire.RelHub, s.hub) {
		s.fail("Link %q", r.Header.Values(wire.HeaderLink))
	}
	if _, err := (&gofeed.Parser{}).Parse(bytes.NewReader(body)); err != nil {
		s.fail("gofeed: %v", err)
	}
	f, err := atom.Parse(bytes.NewReader(body))
	if err != nil {
		s.fail("atom: %v", err)
		return
	}
	if f.Link(wire.RelSelf) != s.topic || f.Link(wire.RelHub) != s.hub {
		s.fail("document links self %q hub %q", f.Link(wire.RelSelf), f.Link(wire.RelHub))
	}
	seq, _ := strconv.ParseUint(r.Header.Get(wire.HeaderSeq), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for i := range f.Entries {
		ids = append(ids, f.Entries[i].ID)
	}
	s.docs[seq] = ids
	for i := len(f.Entries) - 1; i >= 0; i-- { // newest first: apply oldest first
		s.state[f.Entries[i].ID] = !f.Entries[i].IsDeletion()
	}
	s.lastSeq = max(s.lastSeq, seq)
}

func hasLink(links []wire.Link, rel, href string) bool {
	for _, l := range links {
		if l.Href == href && slices.Contains(l.Rels, rel) {
			return true
		}
	}
	return false
}

// subscribe asks the hub for a subscription to the feed URL and waits for
// the verification of intent.
func (s *atomSubscriber) subscribe(t *testing.T) {
	resp, err := http.PostForm(s.hub, url.Values{"hub.mode": {"subscribe"}, "hub.topic": {s.topic}, "hub.callback": {s.srv.URL + "/cb"}, "hub.secret": {s.secret}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("subscribe: %s", resp.Status)
	}
	waitFor(t, "verification of intent", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.verified })
	time.Sleep(200 * time.Millisecond) // the hub stores the subscription after the echo
}

func (s *atomSubscriber) live() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, ok := range s.state {
		if ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startAtomHub runs a demo hub whose Change Lists rotate every rotate
// entries and returns its URL and the demo channel's feed URL.
func startAtomHub(t *testing.T, rotate int) (hubURL, feed string) {
	hubURL = servertest.Start(t, nil, func(c *server.Config) {
		c.LeaseMin, c.LeaseDefault, c.LeaseMax, c.PerHost = 1, 3600, 86400, 4
		c.Retry = "50ms,x2,max=200ms,attempts=3"
		c.RotateEntries = rotate
	}).HubURL
	return hubURL, strings.TrimSuffix(hubURL, "/") + wire.FeedPath("demo")
}

// TestWebSubAtom_SubscriberOfTheFeedURLReceivesEachBatch: a plain WebSub
// subscriber of the feed URL receives each notification as a signed Atom
// document that gofeed parses, with exactly the notification's entries.
func TestWebSubAtom_SubscriberOfTheFeedURLReceivesEachBatch(t *testing.T) {
	hubURL, feed := startAtomHub(t, 50000)
	s := newAtomSubscriber(t, hubURL, feed)
	s.subscribe(t)
	ctx := context.Background()
	p, err := publisher.New(ctx, publisher.Config{Hub: hubURL, Topic: hubURL + "topics/demo"})
	if err != nil {
		t.Fatal(err)
	}
	batches := [][]publisher.Change{
		{{Loc: "http://example.com/a", Change: changefeed.Created, Length: -1}, {Loc: "http://example.com/b", Change: changefeed.Created, Length: 3, Type: "text/plain"}},
		{{Loc: "http://example.com/a", Change: changefeed.Deleted, Length: -1}},
	}
	want := map[uint64][]string{}
	var last uint64
	for _, b := range batches {
		res, err := p.Publish(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := len(b) - 1; i >= 0; i-- {
			ids = append(ids, b[i].Loc)
		}
		want[res.Seq], last = ids, res.Seq
	}
	waitFor(t, "the deliveries", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.lastSeq >= last })
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.problems) > 0 {
		t.Fatal(strings.Join(s.problems, "\n"))
	}
	for seq, ids := range want {
		if !slices.Equal(s.docs[seq], ids) {
			t.Errorf("seq %d: entries %v, want %v", seq, s.docs[seq], ids)
		}
	}
	if got := fmt.Sprint(s.state); got != "map[http://example.com/a:false http://example.com/b:true]" {
		t.Errorf("state %s", got)
	}
}

// crawlChangeLists reads the demo channel's Change Lists from its
// Capability List (archived lists, then the open one or the index's) and
// returns the live resources they say.
func crawlChangeLists(t *testing.T, base string) []string {
	t.Helper()
	fetch := func(u string) *changefeed.Document {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", u, resp.Status)
		}
		d, err := changefeed.Parse(resp.Body, changefeed.Options{Mode: changefeed.Lenient})
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		return d
	}
	cl := fetch(base + wire.CapabilityListPath("demo"))
	var lists []string
	add := func(u string) {
		if !slices.Contains(lists, u) {
			lists = append(lists, u)
		}
	}
	for _, en := range cl.Entries {
		if en.MD.Capability != changefeed.CapChangeListArchive {
			continue
		}
		ad := fetch(en.Loc)
		pages := []*changefeed.Document{ad}
		if ad.Kind == changefeed.SitemapIndex {
			pages = pages[:0]
			for _, pe := range ad.Entries {
				pages = append(pages, fetch(pe.Loc))
			}
		}
		for _, pd := range pages {
			for _, le := range pd.Entries {
				add(le.Loc)
			}
		}
	}
	for _, en := range cl.Entries {
		if en.MD.Capability != changefeed.CapChangeList {
			continue
		}
		if d := fetch(en.Loc); d.Kind == changefeed.SitemapIndex {
			for _, le := range d.Entries {
				add(le.Loc)
			}
		} else {
			add(en.Loc)
		}
	}
	state := map[string]bool{}
	for _, u := range lists {
		for _, en := range fetch(u).Entries {
			state[en.Loc] = en.MD.Change != changefeed.Deleted
		}
	}
	var out []string
	for id, ok := range state {
		if ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// TestWebSubAtom_MirrorsAgree is the property the issue asks for: for a
// random history with rotations, the Atom-PMH harvester's mirror (over
// the feed URLs), the Change-List crawler's state and the state of a
// WebSub subscriber of the feed URL are equal, and equal the Source's.
func TestWebSubAtom_MirrorsAgree(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 14))
			hubURL, feed := startAtomHub(t, 4+rng.IntN(8))
			base := strings.TrimSuffix(hubURL, "/")
			s := newAtomSubscriber(t, hubURL, feed)
			s.subscribe(t)
			ctx := context.Background()
			p, err := publisher.New(ctx, publisher.Config{Hub: hubURL, Topic: hubURL + "topics/demo"})
			if err != nil {
				t.Fatal(err)
			}
			h, err := atom.New(atom.Config{Feed: feed}, atom.State{})
			if err != nil {
				t.Fatal(err)
			}
			harvested := harvestStore{}
			source := map[string]bool{}
			var last uint64
			for round := range 4 {
				for range 3 + rng.IntN(6) {
					var b []publisher.Change
					seen := map[string]bool{}
					for range 1 + rng.IntN(4) {
						loc := fmt.Sprintf("http://example.com/r%d", rng.IntN(12))
						if seen[loc] {
							continue
						}
						seen[loc] = true
						c := changefeed.Updated
						switch {
						case !source[loc]:
							c = changefeed.Created
						case rng.IntN(3) == 0:
							c = changefeed.Deleted
						}
						source[loc] = c != changefeed.Deleted
						b = append(b, publisher.Change{Loc: loc, Change: c, Length: -1})
					}
					res, err := p.Publish(ctx, b)
					if err != nil {
						t.Fatal(err)
					}
					last = res.Seq
				}
				if _, err := h.Harvest(ctx, harvested); err != nil {
					t.Fatalf("round %d: harvest: %v", round, err)
				}
			}
			waitFor(t, "the deliveries", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.lastSeq >= last })
			var want []string
			for id, ok := range source {
				if ok {
					want = append(want, id)
				}
			}
			slices.Sort(want)
			s.mu.Lock()
			problems := s.problems
			s.mu.Unlock()
			if len(problems) > 0 {
				t.Fatal(strings.Join(problems, "\n"))
			}
			// pull mode reads the log's tail, which may lag the publish
			// answer a little: harvest until the mirror stops moving
			waitFor(t, "the harvester to reach the Source", func() bool {
				if _, err := h.Harvest(ctx, harvested); err != nil {
					t.Fatalf("final harvest: %v", err)
				}
				return slices.Equal(harvested.ids(), want)
			})
			if got := harvested.ids(); !slices.Equal(got, want) {
				t.Errorf("harvester %v\nSource %v", got, want)
			}
			if got := crawlChangeLists(t, base); !slices.Equal(got, want) {
				t.Errorf("Change-List crawl %v\nSource %v", got, want)
			}
			resp, err := http.Get(feed)
			if err != nil {
				t.Fatal(err)
			}
			f, err := atom.Parse(resp.Body)
			_ = resp.Body.Close()
			if err != nil || f.Link(wire.RelPrevArchive) == "" {
				t.Fatalf("no archive after rotations: %v", err)
			}
			if got := s.live(); !slices.Equal(got, want) {
				t.Errorf("WebSub Atom subscriber %v\nSource %v", got, want)
			}
		})
	}
}

// harvestStore is the harvester's mirror: the ids it holds.
type harvestStore map[string]bool

func (m harvestStore) Put(_ context.Context, id string, _ *atom.Entry) error {
	m[id] = true
	return nil
}
func (m harvestStore) Delete(_ context.Context, id string) error { delete(m, id); return nil }
func (m harvestStore) ids() []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
