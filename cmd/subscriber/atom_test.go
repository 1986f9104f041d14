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
	"sync/atomic"
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

// TestAtom_ResourceThatFailsIsShownAndRetried: a live resource answering
// 404 is not deleted from the mirror; the run says how many failed, warns,
// exits with an error (--atom-interval 0), and the next run fetches it.
func TestAtom_ResourceThatFailsIsShownAndRetried(t *testing.T) {
	var feed string
	var up atomic.Bool
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	entry := func(updated string) string {
		return `<entry><id>` + srv.URL + `/r/a</id><title>t</title><updated>` + updated + `</updated><link rel="alternate" href="` + srv.URL + `/r/a"/></entry>`
	}
	doc := func(entries ...string) string {
		return `<feed xmlns="http://www.w3.org/2005/Atom"><id>` + srv.URL + `/feed</id><title>f</title><updated>2024-01-02T00:00:00Z</updated>` +
			`<author><name>a</name></author>` + strings.Join(entries, "") + `</feed>`
	}
	mux.HandleFunc("/feed", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, feed) })
	mux.HandleFunc("/r/a", func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "v2")
	})
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.MkdirAll(filepath.Join(dir, "r"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "r", "a"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--atom", srv.URL + "/feed", "--mirror", dir, "--atom-interval", "0", "--base-url", srv.URL + "/"}
	none := func(string) (string, bool) { return "", false }
	feed = doc(entry("2024-01-01T00:00:02Z"))
	var out, errs strings.Builder
	err := run(context.Background(), args, none, &out, &errs)
	if err == nil || !strings.Contains(out.String(), "1 failed") || !strings.Contains(errs.String(), "level=WARN") {
		t.Fatalf("run with a resource answering 404: err %v\nstdout %s\nstderr %s", err, out.String(), errs.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r", "a")); err != nil || string(b) != "v1" {
		t.Fatalf("the mirror's file after a 404: %q, %v", b, err)
	}
	up.Store(true)
	out.Reset()
	if err := run(context.Background(), args, none, &out, io.Discard); err != nil || !strings.Contains(out.String(), "1 put, 0 deleted, 0 failed") {
		t.Fatalf("retry: %v, %s", err, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "r", "a")); err != nil || string(b) != "v2" {
		t.Fatalf("after the retry: %q, %v", b, err)
	}
}
