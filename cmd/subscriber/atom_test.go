package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAtom_HarvestsTheFeedIntoTheMirrorAndResumes: --atom with
// --atom-interval 0 harvests once: active entries are fetched into the
// mirror, a deletion entry removes its file, and the state file makes the
// second run read only the subscription document.
func TestAtom_HarvestsTheFeedIntoTheMirrorAndResumes(t *testing.T) {
	var feed string
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	entry := func(id, updated string, deleted bool) string {
		link := `<link rel="alternate" type="text/plain" href="` + id + `"/>`
		if deleted {
			link = "<content/>"
		}
		return `<entry><id>` + id + `</id><title>t</title><updated>` + updated + `</updated>` + link + `</entry>`
	}
	doc := func(entries ...string) string {
		return `<feed xmlns="http://www.w3.org/2005/Atom"><id>` + srv.URL + `/feed</id><title>f</title><updated>2024-01-02T00:00:00Z</updated>` +
			`<author><name>a</name></author>` + strings.Join(entries, "") + `</feed>`
	}
	gets := 0
	mux.HandleFunc("/feed", func(w http.ResponseWriter, r *http.Request) { gets++; io.WriteString(w, feed) })
	mux.HandleFunc("/r/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "body of ", r.URL.Path) })
	dir := filepath.Join(t.TempDir(), "m")
	args := []string{"--atom", srv.URL + "/feed", "--mirror", dir, "--atom-interval", "0", "--base-url", srv.URL + "/"}
	none := func(string) (string, bool) { return "", false }

	feed = doc(entry(srv.URL+"/r/b", "2024-01-01T00:00:02Z", false), entry(srv.URL+"/r/a", "2024-01-01T00:00:01Z", false))
	if err := run(context.Background(), args, none, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r", "a")); err != nil || string(b) != "body of /r/a" {
		t.Fatalf("r/a: %q, %v", b, err)
	}
	feed = doc(entry(srv.URL+"/r/a", "2024-01-01T00:00:03Z", true), entry(srv.URL+"/r/b", "2024-01-01T00:00:02Z", false))
	if err := run(context.Background(), args, none, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r", "a")); !os.IsNotExist(err) {
		t.Fatalf("r/a after its deletion entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r", "b")); err != nil {
		t.Fatal(err)
	}
	if gets != 2 {
		t.Errorf("%d GETs of the feed", gets)
	}
}
