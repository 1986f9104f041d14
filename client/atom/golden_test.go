package atom_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	gofeed "github.com/mmcdole/gofeed/atom"

	"github.com/rshub/rshub/client/atom"
)

// The fixtures in testdata/seed are the examples of the Atom-PMH
// specification, retyped: the quotes the specification's text breaks are
// mended and each feed has the atom:author RFC 4287 requires.

const (
	alpha = "urn:uuid:177d5415-c443-410f-a5b6-44bf8433594f"
	beta  = "urn:uuid:e7aca47e-76c5-4648-948b-583ffdaafa0d"
	gamma = "urn:uuid:fca64ec1-4984-4d34-8f02-f14a58ec5e78"
	delta = "urn:uuid:4cee3cd0-a7a7-42c8-a6ee-74df0bd04cc4"
)

// files serves fixtures by URL; the map may change between harvests.
type files struct {
	mu  sync.Mutex
	m   map[string]string
	got []string
}

func (f *files) set(url, file string) { f.mu.Lock(); f.m[url] = file; f.mu.Unlock() }

func (f *files) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	name, ok := f.m[r.URL.String()]
	f.got = append(f.got, r.URL.String())
	f.mu.Unlock()
	if !ok {
		return &http.Response{StatusCode: 404, Status: "404 Not Found", Body: http.NoBody, Request: r}, nil
	}
	fh, err := os.Open(filepath.Join("testdata", "seed", name))
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Body: fh, Request: r, Header: http.Header{"Content-Type": {"application/atom+xml"}}}, nil
}

// memStore is a Store in memory: id to the alternate link put.
type memStore map[string]string

func (m memStore) Put(_ context.Context, id string, e *atom.Entry) error {
	m[id] = e.Alternates()[0].Href
	return nil
}

func (m memStore) Delete(_ context.Context, id string) error { delete(m, id); return nil }

func (m memStore) ids() []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func sorted(ids ...string) []string { slices.Sort(ids); return ids }

func harvest(t *testing.T, fs *files, feed string, st atom.State, store atom.Store) (atom.State, atom.Stats) {
	t.Helper()
	h, err := atom.New(atom.Config{Feed: feed, Client: &http.Client{Transport: fs}}, st)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := h.Harvest(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return h.State(), stats
}

func TestGolden_SeedExamplesParseWithGofeed(t *testing.T) {
	names, _ := filepath.Glob("testdata/seed/*.atom")
	if len(names) != 8 {
		t.Fatalf("%d fixtures", len(names))
	}
	for _, n := range names {
		fh, err := os.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := (&gofeed.Parser{}).Parse(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: gofeed: %v", n, err)
		}
		fh, _ = os.Open(n)
		ours, err := atom.Parse(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if len(f.Entries) != len(ours.Entries) || f.ID != ours.ID {
			t.Errorf("%s: gofeed reads %d entries, id %q; Parse %d, %q", n, len(f.Entries), f.ID, len(ours.Entries), ours.ID)
		}
	}
}

func TestHarvest_Example1FollowsPrevArchiveToTheOldest(t *testing.T) {
	fs := &files{m: map[string]string{
		"http://example.org/feed/archived":       "ex1-subscription.atom",
		"http://example.org/archived/2012/10/31": "ex1-archive-2012-10-31.atom",
		"http://example.org/archived/2012/06/30": "ex1-archive-2012-06-30.atom",
		"http://example.org/archived/2011/12/31": "ex1-archive-2011-12-31.atom",
	}}
	store := memStore{}
	st, stats := harvest(t, fs, "http://example.org/feed/archived", atom.State{}, store)
	if got, want := store.ids(), sorted(alpha, beta, gamma, delta); !slices.Equal(got, want) {
		t.Fatalf("pool %v, want %v", got, want)
	}
	if stats.Documents != 4 || stats.Put != 4 || st.Archive != "http://example.org/archived/2012/10/31" {
		t.Fatalf("stats %+v, archive %q", stats, st.Archive)
	}
	if store[gamma] != "http://example.org/entry/0003.atom" {
		t.Errorf("gamma's first alternate link %q", store[gamma])
	}

	// Example 2: the subscription document became an archive and a new one
	// holds a deletion entry; the harvest stops at the archive it has.
	fs.set("http://example.org/archived/2012/11/01", "ex1-subscription.atom")
	fs.set("http://example.org/feed/archived", "ex2-subscription.atom")
	fs.got = nil
	st, stats = harvest(t, fs, "http://example.org/feed/archived", st, store)
	if got, want := store.ids(), sorted(beta, gamma, delta); !slices.Equal(got, want) {
		t.Fatalf("after the deletion entry: %v, want %v", got, want)
	}
	if stats.Documents != 2 || stats.Deleted != 1 || stats.Put != 0 || !slices.Equal(fs.got, []string{"http://example.org/feed/archived", "http://example.org/archived/2012/11/01"}) {
		t.Fatalf("incremental harvest: stats %+v, fetched %v", stats, fs.got)
	}
	if r := st.Records[alpha]; !r.Deleted {
		t.Errorf("alpha's record %+v", r)
	}

	// Nothing new: one document, nothing applied.
	_, stats = harvest(t, fs, "http://example.org/feed/archived", st, store)
	if stats.Documents != 1 || stats.Put+stats.Deleted != 0 {
		t.Errorf("repeat harvest: %+v", stats)
	}
}

func TestHarvest_CompleteFeedDeletesWhatItNoLongerLists(t *testing.T) {
	fs := &files{m: map[string]string{"http://example.org/feed/complete": "ex3-complete.atom"}}
	store := memStore{}
	st, _ := harvest(t, fs, "http://example.org/feed/complete", atom.State{}, store)
	if got, want := store.ids(), sorted(alpha, beta, gamma, delta); !slices.Equal(got, want) {
		t.Fatalf("example 3: %v", got)
	}
	if !strings.HasSuffix(store[delta], "0004.atom") {
		t.Errorf("delta put from %q, want its first alternate", store[delta])
	}
	fs.set("http://example.org/feed/complete", "ex4-complete.atom")
	_, stats := harvest(t, fs, "http://example.org/feed/complete", st, store)
	if got, want := store.ids(), sorted(beta, gamma, delta); !slices.Equal(got, want) || stats.Deleted != 1 {
		t.Fatalf("example 4: %v, stats %+v", got, stats)
	}
}

func TestHarvest_HistoricalEntryThenActiveEntry(t *testing.T) {
	fs := &files{m: map[string]string{"http://example.org/feed/update": "ex5-update.atom"}}
	store := memStore{}
	st, _ := harvest(t, fs, "http://example.org/feed/update", atom.State{}, store)
	if r := st.Records[beta]; r.Updated.Format("2006-01-02T15:04:05Z") != "2012-11-02T07:30:00Z" || len(store) != 1 {
		t.Fatalf("beta %+v, store %v", r, store)
	}
	// an older entry met later is historical: skipped
	_, stats := harvest(t, fs, "http://example.org/feed/update", st, store)
	if stats.Put != 0 || stats.Skipped != 2 {
		t.Errorf("second harvest %+v", stats)
	}
}
