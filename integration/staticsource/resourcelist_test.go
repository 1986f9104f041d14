package staticsource

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// rlResource is what a Resource List says of a resource.
type rlResource struct {
	lastmod, hash string
	length        int
}

// writeResourceList writes the resources into dir/res and a Resource List
// of them (lastmod, md5 and sha-256, length) at dir/resourcelist.xml, and
// returns what the list says of each, by loc.
func writeResourceList(t *testing.T, dir, base string, contents map[string]string) map[string]rlResource {
	t.Helper()
	res := filepath.Join(dir, "res")
	if err := os.MkdirAll(res, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadDir(res)
	for _, e := range old {
		if _, ok := contents[e.Name()]; !ok {
			if err := os.Remove(filepath.Join(res, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := make([]string, 0, len(contents))
	for n := range contents {
		names = append(names, n)
	}
	sort.Strings(names)
	said := map[string]rlResource{}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="resourcelist" at="` + stamp(time.Now()) + `"/>
`)
	for _, n := range names {
		p := filepath.Join(res, n)
		body := contents[n]
		if cur, err := os.ReadFile(p); err != nil || string(cur) != body {
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		m, s := md5.Sum([]byte(body)), sha256.Sum256([]byte(body))
		r := rlResource{lastmod: stamp(st.ModTime()), hash: "md5:" + hex.EncodeToString(m[:]) + " sha-256:" + hex.EncodeToString(s[:]), length: len(body)}
		loc := base + "/res/" + n
		said[loc] = r
		fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>%s</lastmod><rs:md hash=%q length=\"%d\"/></url>\n", loc, r.lastmod, r.hash, r.length)
	}
	b.WriteString("</urlset>\n")
	tmp := filepath.Join(dir, "resourcelist.xml.tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "resourcelist.xml")); err != nil {
		t.Fatal(err)
	}
	n := time.Now()
	if err := os.Chtimes(filepath.Join(dir, "resourcelist.xml"), n, n); err != nil {
		t.Fatal(err)
	}
	return said
}

// A Source with only a Resource List, served by nginx: the hub diffs
// successive lists, and each created or updated resource's notification
// carries the list's own lastmod, hash (md5 and sha-256) and length, so a
// mirror can check what it fetches; a deletion carries none.
func TestStaticSource_ResourceListDiffCarriesTheListsLastmodHashAndLength(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startNginx(t, dir, true, nil)
	rounds := []map[string]string{
		{"a.txt": "alpha\n", "b.txt": "bravo\n", "c.txt": "charlie\n"},
		{"a.txt": "alpha, again\n", "c.txt": "charlie\n", "d.txt": "delta\n"},
		{"a.txt": "alpha, again\n", "d.txt": "delta, twice\n", "e.txt": "echo\n"},
	}
	writeResourceList(t, dir, srv.base, rounds[0])
	h := startHub(t)
	rcv := newReceiver(t)
	h.follow(t, "rl", srv.base+"/resourcelist.xml", "100ms", rcv)
	seen := 0
	for i, contents := range rounds[1:] {
		prev := rounds[i]
		said := writeResourceList(t, dir, srv.base, contents)
		want := 0 // the changes of this round
		for n, body := range contents {
			if prev[n] != body {
				want++
			}
		}
		for n := range prev {
			if _, ok := contents[n]; !ok {
				want++
			}
		}
		waitFor(t, 60*time.Second, fmt.Sprintf("round %d: the hub published the round's %d changes", i+1, want), func() bool {
			return len(rcv.received()) >= seen+want
		})
		got := rcv.received()[seen:]
		seen += len(got)
		if len(got) != want {
			t.Fatalf("round %d: %d entries published, want %d", i+1, len(got), want)
		}
		for _, e := range got {
			if e.MD.Change == changefeed.Deleted {
				if e.MD.Hash != "" || e.MD.Length != -1 || !e.LastMod.IsZero() {
					t.Errorf("round %d: deletion of %s carries hash %q length %d lastmod %q", i+1, e.Loc, e.MD.Hash, e.MD.Length, e.LastMod.Raw)
				}
				continue
			}
			r, ok := said[e.Loc]
			if !ok {
				t.Fatalf("round %d: %s %s published, not in the Resource List", i+1, e.MD.Change, e.Loc)
			}
			gotLM := ""
			if !e.LastMod.IsZero() {
				gotLM = stamp(e.LastMod.Time)
			}
			if e.MD.Hash != r.hash || e.MD.Length != int64(r.length) || gotLM != r.lastmod {
				t.Errorf("round %d: %s %s carries hash %q length %d lastmod %q; the Resource List says %q %d %q",
					i+1, e.MD.Change, e.Loc, e.MD.Hash, e.MD.Length, gotLM, r.hash, r.length, r.lastmod)
			}
		}
	}
}
