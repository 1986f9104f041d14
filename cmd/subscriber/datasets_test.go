package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestHelp_DocumentsDatasetMode(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, noEnv, &out, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, f := range []string{"dataset", "dataset-name", "all", "list-datasets", "dataset-file", "export", "no-follow"} {
		if !strings.Contains(out.String(), "--"+f+" ") || !strings.Contains(out.String(), "RSHUB_SUBSCRIBER_"+strings.ToUpper(strings.ReplaceAll(f, "-", "_"))) {
			t.Errorf("--help does not document --%s and its variable", f)
		}
	}
}

func TestSettings_DatasetModeRefusesBadCombinations(t *testing.T) {
	for _, args := range [][]string{
		{"--dataset", "d"}, // no source
		{"--dataset", "d", "--mirror", "m", "--source", "http://s/"}, // both
		{"--dataset", "d", "--all", "--dataset-name", "x", "--source", "http://s/"},
		{"--dataset", "d", "--source", "http://s/", "--filter-prefix", "http://s/a"},
	} {
		if _, err := parseSettings(args, noEnv, &bytes.Buffer{}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	if _, err := parseSettings([]string{"--list-datasets", "--source", "http://s/"}, noEnv, &bytes.Buffer{}); err != nil {
		t.Errorf("--list-datasets: %v", err)
	}
}

// datasetSource serves two datasets: one built from patches, one from a
// Resource List.
func datasetSource(t *testing.T) *httptest.Server {
	patch := "+<http://x/a> <http://x/p> \"1\" .\n+_:b <http://x/p> <http://x/a> .\n"
	sum := sha256.Sum256([]byte(patch))
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
		u := srv.URL
		switch r.URL.Path {
		case "/.well-known/resourcesync":
			fmt.Fprintf(w, `%s<rs:md capability="description"/><url><loc>%s/a/cl.xml</loc><rs:ln rel="describedby" href="%s/a/about.nt"/></url><url><loc>%s/b/cl.xml</loc></url></urlset>`, head, u, u, u)
		case "/a/cl.xml":
			fmt.Fprintf(w, `%s<rs:md capability="capabilitylist"/><url><loc>%s/a/changes.xml</loc><rs:md capability="changelist"/></url></urlset>`, head, u)
		case "/a/changes.xml":
			fmt.Fprintf(w, `%s<rs:md capability="changelist" from="2020-01-01T00:00:00Z"/><url><loc>%s/a/1.nqud</loc><rs:md change="created" datetime="2021-01-01T00:00:00Z" hash="sha-256:%s"/></url></urlset>`, head, u, hex.EncodeToString(sum[:]))
		case "/a/1.nqud":
			fmt.Fprint(w, patch)
		case "/a/about.nt":
			fmt.Fprintf(w, "<%s/a> <http://purl.org/dc/terms/title> \"Dataset A\" .\n", u)
		case "/b/cl.xml":
			fmt.Fprintf(w, `%s<rs:ln rel="describedby" href="%s/b/about.rdf"/><rs:md capability="capabilitylist"/><url><loc>%s/b/rl.xml</loc><rs:md capability="resourcelist"/></url></urlset>`, head, u, u)
		case "/b/rl.xml":
			fmt.Fprintf(w, `%s<rs:md capability="resourcelist" at="2021-01-01T00:00:00Z"/><url><loc>%s/b/data</loc><rs:md type="text/turtle"/></url></urlset>`, head, u)
		case "/b/data":
			fmt.Fprint(w, "<http://x/c> <http://x/p> 7 .")
		case "/b/about.rdf":
			fmt.Fprint(w, `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:dc="http://purl.org/dc/elements/1.1/"><rdf:Description rdf:about="http://x/b"><dc:title>Dataset B</dc:title></rdf:Description></rdf:RDF>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDatasetMode_ListsAndImports(t *testing.T) {
	srv := datasetSource(t)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"--source", srv.URL + "/", "--list-datasets"}, noEnv, &out, &errOut); err != nil {
		t.Fatalf("list: %v %s", err, errOut.String())
	}
	for _, want := range []string{"a\tDataset A", "patches of " + srv.URL + "/a/changes.xml", "b\tDataset B", "dataset file of " + srv.URL + "/b/rl.xml"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, out.String())
		}
	}
	err := run(context.Background(), []string{"--source", srv.URL + "/", "--dataset", t.TempDir()}, noEnv, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--dataset-name") {
		t.Fatalf("two datasets, none chosen: %v", err)
	}
	for name, want := range map[string]string{
		"a":         "<http://x/a> <http://x/p> \"1\" .\n_:b <http://x/p> <http://x/a> .\n",
		"Dataset B": "<http://x/c> <http://x/p> \"7\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
	} {
		out.Reset()
		args := []string{"--source", srv.URL + "/", "--dataset", t.TempDir(), "--dataset-name", name, "--no-follow", "--export", "-", "--progress", "lines"}
		if err := run(context.Background(), args, noEnv, &out, &errOut); err != nil {
			t.Fatalf("%s: %v %s", name, err, errOut.String())
		}
		if !strings.HasSuffix(out.String(), want) {
			t.Errorf("%s: output\n%s\nwant it to end with\n%s", name, out.String(), want)
		}
	}
}

// `--dataset DIR --no-follow` run again on the same DIR (a nightly sync)
// applies the patches the Source published since the last run.
func TestDatasetMode_NoFollowRunAgainCatchesUp(t *testing.T) {
	var published atomic.Int32
	published.Store(1)
	quad := func(i int) string { return fmt.Sprintf("<http://x/s%d> <http://x/p> \"%d\" .\n", i, i) }
	patch := func(i int) string { return "+" + quad(i) }
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
		u := srv.URL
		var i int
		switch _, err := fmt.Sscanf(r.URL.Path, "/p/%d.nqud", &i); {
		case err == nil && i < int(published.Load()):
			fmt.Fprint(w, patch(i))
		case r.URL.Path == "/.well-known/resourcesync":
			fmt.Fprintf(w, `%s<rs:md capability="description"/><url><loc>%s/cl.xml</loc></url></urlset>`, head, u)
		case r.URL.Path == "/cl.xml":
			fmt.Fprintf(w, `%s<rs:md capability="capabilitylist"/><url><loc>%s/changes.xml</loc><rs:md capability="changelist"/></url></urlset>`, head, u)
		case r.URL.Path == "/changes.xml":
			fmt.Fprintf(w, `%s<rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>`, head)
			for i := range int(published.Load()) {
				sum := sha256.Sum256([]byte(patch(i)))
				fmt.Fprintf(w, `<url><loc>%s/p/%d.nqud</loc><rs:md change="created" datetime="2021-01-01T00:00:%02dZ" hash="sha-256:%s"/></url>`, u, i, i, hex.EncodeToString(sum[:]))
			}
			fmt.Fprint(w, `</urlset>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	sync := func() string {
		t.Helper()
		var out, errOut bytes.Buffer
		args := []string{"--source", srv.URL + "/", "--dataset", dir, "--no-follow", "--export", "-", "--progress", "lines"}
		if err := run(context.Background(), args, noEnv, &out, &errOut); err != nil {
			t.Fatalf("sync: %v %s", err, errOut.String())
		}
		return out.String()
	}
	if out := sync(); !strings.HasSuffix(out, quad(0)) {
		t.Fatalf("first sync:\n%s", out)
	}
	published.Store(3)
	want := quad(0) + quad(1) + quad(2)
	if out := sync(); !strings.HasSuffix(out, want) {
		t.Fatalf("second sync after two more patches:\n%s\nwant it to end with\n%s", out, want)
	}
}
