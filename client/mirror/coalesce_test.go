package mirror

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// TestNATSCatchUp_AppliesTheBacklogCoalesced feeds a backlog to a NATS
// session's catch-up: notifications the mirror holds are skipped, the
// rest applied as one, each resource fetched once (a resource created and
// deleted in the backlog not at all), and the mirror ends equal to the
// Source.
func TestNATSCatchUp_AppliesTheBacklogCoalesced(t *testing.T) {
	var mu sync.Mutex
	files := map[string]string{}
	gets := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		name := r.URL.Path[len("/files/"):]
		gets[name]++
		b, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(b))
	}))
	defer srv.Close()

	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []*changefeed.Document
	change := func(edits map[string]string) {
		i := len(docs)
		from, until := t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i+1)*time.Minute)
		d := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: changefeed.MD{
			Capability: changefeed.CapChangeNotification, Length: -1,
			From: changefeed.NewDateTime(from), Until: changefeed.NewDateTime(until),
		}}}
		mu.Lock()
		defer mu.Unlock()
		for _, name := range []string{"a", "b", "c", "tmp"} {
			content, ok := edits[name]
			if !ok {
				continue
			}
			md := &changefeed.MD{Length: -1, DateTime: changefeed.NewDateTime(from.Add(time.Second))}
			_, existed := files[name]
			switch {
			case content == "":
				md.Change = changefeed.Deleted
				delete(files, name)
			case existed:
				md.Change = changefeed.Updated
			default:
				md.Change = changefeed.Created
			}
			if content != "" {
				files[name] = content
				sum := md5.Sum([]byte(content))
				md.Hash, md.Length = "md5:"+hex.EncodeToString(sum[:]), int64(len(content))
			}
			d.Entries = append(d.Entries, changefeed.Entry{Loc: srv.URL + "/files/" + name, MD: md})
		}
		docs = append(docs, d)
	}
	change(map[string]string{"a": "a0", "b": "b0"})
	change(map[string]string{"a": "a1"})
	for i := range 20 {
		change(map[string]string{"a": fmt.Sprint("a", i+2), "c": fmt.Sprint("c", i)})
	}
	change(map[string]string{"tmp": "t"})
	change(map[string]string{"tmp": "", "b": "b1"})

	dir := filepath.Join(t.TempDir(), "m")
	m, err := Open(Config{Dir: dir, Hub: "http://127.0.0.1:1/", Topic: "https://example.org/t", BaseURL: srv.URL + "/files/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.st.Baselined, m.st.Until = true, t0
	// the mirror already holds the first two notifications
	for i, d := range docs[:2] {
		if err := m.Apply(ctx, UpdateOf(d, uint64(i+1), "test")); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	clear(gets)
	mu.Unlock()

	cu := natsCatchUp{m: m, co: newCoalescer(0), on: true}
	alone := 0
	for i, d := range docs {
		done, err := cu.add(ctx, d, uint64(i+1), uint64(len(docs)-1-i))
		if err != nil {
			t.Fatal(err)
		}
		if !done {
			alone++
			if err := m.Apply(ctx, UpdateOf(d, uint64(i+1), "test")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if alone != 0 || cu.on {
		t.Errorf("%d notifications applied alone, catching up %v; want 0, false", alone, cu.on)
	}
	st := m.State()
	if !st.Until.Equal(docs[len(docs)-1].MD.Until.Time) || st.Seq != uint64(len(docs)) || st.Applied != 3 {
		t.Errorf("state until %v seq %d applied %d; want the last notification's, %d, 3", st.Until, st.Seq, st.Applied, len(docs))
	}
	mu.Lock()
	defer mu.Unlock()
	for name, content := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != content {
			t.Errorf("%s: mirror %q (%v), Source %q", name, b, err, content)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp")); !os.IsNotExist(err) {
		t.Errorf("tmp exists in the mirror: %v", err)
	}
	want := map[string]int{"a": 1, "b": 1, "c": 1}
	for name, n := range gets {
		if n != want[name] {
			t.Errorf("%s fetched %d times, want %d", name, n, want[name])
		}
	}
}
