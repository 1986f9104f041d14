package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testSource is a small ResourceSync Source in the way Timbuctoo
// publishes datasets: a Source Description, one Capability List per
// dataset with a describedby description, Change Lists of .nqud patches
// and Resource Lists.
type testSource struct {
	srv   *httptest.Server
	files map[string]file // path -> content
}

type file struct {
	body, ctype string
	header      http.Header
}

func newTestSource(t *testing.T) *testSource {
	s := &testSource{files: map[string]file{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range f.header {
			w.Header()[k] = v
		}
		if f.ctype != "" {
			w.Header().Set("Content-Type", f.ctype)
		}
		fmt.Fprint(w, f.body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *testSource) put(path, ctype, body string) { s.files[path] = file{body: body, ctype: ctype} }

func (s *testSource) url(p string) string { return s.srv.URL + p }

func sha(b string) string { h := sha256.Sum256([]byte(b)); return hex.EncodeToString(h[:]) }

const rsHead = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`

// dataset adds a dataset with the given patches (a Change List) or files
// (a Resource List; the first is marked isDataSet when mark).
func (s *testSource) dataset(name, title string, patches []string, files []string, mark bool) {
	base := "/" + name + "/"
	cl := rsHead + `<rs:ln rel="describedby" href="` + s.url(base+"description.ttl") + `"/><rs:md capability="capabilitylist"/>`
	if patches != nil {
		cl += `<url><loc>` + s.url(base+"changelist.xml") + `</loc><rs:md capability="changelist"/></url>`
		var b strings.Builder
		b.WriteString(rsHead + `<rs:ln rel="up" href="` + s.url(base+"capabilitylist.xml") + `"/><rs:md capability="changelist" from="2020-01-01T00:00:00Z"/>`)
		// listed newest first: the importer must sort them
		for i := len(patches) - 1; i >= 0; i-- {
			p := fmt.Sprintf("%spatch-%03d.nqud", base, i)
			s.put(p, "", patches[i])
			fmt.Fprintf(&b, `<url><loc>%s</loc><rs:md change="created" datetime="2020-01-01T00:%02d:00Z" hash="sha-256:%s" length="%d" type="%s"/></url>`,
				s.url(p), i, sha(patches[i]), len(patches[i]), MediaTypePatch)
		}
		s.put(base+"changelist.xml", "application/xml", b.String()+"</urlset>")
	}
	if files != nil {
		cl += `<url><loc>` + s.url(base+"resourcelist.xml") + `</loc><rs:md capability="resourcelist"/></url>`
		var b strings.Builder
		b.WriteString(rsHead + `<rs:md capability="resourcelist" at="2020-01-02T00:00:00Z"/>`)
		for i, body := range files {
			p := fmt.Sprintf("%sfile%d.nq", base, i)
			s.put(p, "", body)
			extra := ""
			if mark && i == len(files)-1 {
				extra = ` isDataSet="true"`
			}
			fmt.Fprintf(&b, `<url><loc>%s</loc><rs:md length="%d"%s/></url>`, s.url(p), len(body), extra)
		}
		s.put(base+"resourcelist.xml", "application/xml", b.String()+"</urlset>")
	}
	s.put(base+"capabilitylist.xml", "application/xml", cl+"</urlset>")
	s.put(base+"description.ttl", "text/turtle", `@prefix dcterms: <http://purl.org/dc/terms/> . <`+s.url(base)+`> dcterms:title "`+title+`" .`)
}

func (s *testSource) describe(names ...string) {
	var b strings.Builder
	b.WriteString(rsHead + `<rs:md capability="description"/>`)
	for _, n := range names {
		fmt.Fprintf(&b, `<url><loc>%s</loc><rs:md capability="capabilitylist"/></url>`, s.url("/"+n+"/capabilitylist.xml"))
	}
	s.put("/.well-known/resourcesync", "application/xml", b.String()+"</urlset>")
}

var testPatches = []string{
	"--- a\n+++ b\n@@ -0,0 +1,2 @@\n+<http://x/a> <http://x/p> \"1\" .\n+<http://x/b> <http://x/p> _:n .\n",
	"-<http://x/a> <http://x/p> \"1\" .\n+<http://x/a> <http://x/p> \"2\" .\n",
	"+<http://x/a> <http://x/p> \"1\" .\n-<http://x/a> <http://x/p> \"2\" .\n+_:n <http://x/q> \"blank\" .\n",
}

const testFinal = "<http://x/a> <http://x/p> \"1\" .\n<http://x/b> <http://x/p> _:n .\n_:n <http://x/q> \"blank\" .\n"

func exportString(t *testing.T, im *Importer) string {
	t.Helper()
	var b strings.Builder
	if err := im.Export(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDiscover_EntryPoints(t *testing.T) {
	s := newTestSource(t)
	s.dataset("one", "First dataset", testPatches, nil, false)
	s.dataset("two", "Second dataset", nil, []string{testFinal}, false)
	ctx := context.Background()

	s.describe("one", "two")
	all, err := Discover(ctx, nil, s.url("/some/page"))
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, d := range all {
		titles = append(titles, d.Name()+": "+d.Title)
	}
	if want := []string{"one: First dataset", "two: Second dataset"}; !slices.Equal(titles, want) {
		t.Fatalf("well-known: %q, want %q", titles, want)
	}
	if all[0].ChangeList == "" || all[1].ResourceList == "" || all[1].ChangeList != "" {
		t.Fatalf("capabilities: %+v", all)
	}

	delete(s.files, "/.well-known/resourcesync")
	s.files["/page"] = file{body: "<html/>", header: http.Header{"Link": {`<` + s.url("/two/capabilitylist.xml") + `>; rel="resourcesync"`}}}
	if all, err = Discover(ctx, nil, s.url("/page")); err != nil || len(all) != 1 || all[0].Title != "Second dataset" {
		t.Fatalf("Link header: %+v %v", all, err)
	}

	s.put("/robots.txt", "text/plain", "User-agent: *\nSitemap: "+s.url("/one/changelist.xml")+"\n")
	if all, err = Discover(ctx, nil, s.url("/nothing")); err != nil || len(all) != 1 || all[0].Title != "First dataset" {
		t.Fatalf("robots.txt (up from a Change List): %+v %v", all, err)
	}
	delete(s.files, "/robots.txt")
	if _, err := Discover(ctx, nil, s.url("/nothing")); !errors.Is(err, ErrNoDatasets) {
		t.Fatalf("nothing to find: %v", err)
	}

	// a description named only by the Capability List's Link header, in JSON-LD
	cl := s.files["/two/capabilitylist.xml"]
	cl.body = strings.Replace(cl.body, `<rs:ln rel="describedby" href="`+s.url("/two/description.ttl")+`"/>`, "", 1)
	cl.header = http.Header{"Link": {`<` + s.url("/two/about.jsonld") + `>; rel="describedby"`}}
	s.files["/two/capabilitylist.xml"] = cl
	s.put("/two/about.jsonld", "application/ld+json", `{"@id": "http://x/two", "http://purl.org/dc/terms/title": "From JSON-LD"}`)
	if all, err = Discover(ctx, nil, s.url("/two/capabilitylist.xml")); err != nil || len(all) != 1 || all[0].Title != "From JSON-LD" {
		t.Fatalf("Link header describedby: %+v %v", all, err)
	}
	if _, err := Discover(ctx, nil, "not a url"); err == nil {
		t.Fatalf("nothing to find: %v", err)
	}
}

func TestImport_ChangeListAppliesPatchesInDatetimeOrder(t *testing.T) {
	s := newTestSource(t)
	s.dataset("one", "First", testPatches, nil, false)
	s.describe("one")
	all, err := Discover(context.Background(), nil, s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	im, err := Open(Config{Dir: dir, Dataset: all[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := im.Import(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := exportString(t, im); got != testFinal {
		t.Fatalf("dataset:\n%s\nwant\n%s", got, testFinal)
	}
	st := im.State()
	if st.Mode != ModeChangeList || st.Patches != 3 || !st.Until.Equal(time.Date(2020, 1, 1, 0, 2, 0, 0, time.UTC)) || st.Title != "First" {
		t.Fatalf("state %+v", st)
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	snap, _ := os.ReadFile(filepath.Join(dir, SnapshotFile))
	if string(snap) != testFinal {
		t.Fatalf("snapshot on disk:\n%s", snap)
	}
	again, err := Open(Config{Dir: dir, Dataset: all[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got := exportString(t, again); got != testFinal {
		t.Fatalf("after reopening:\n%s", got)
	}
}

func TestImport_RefusesAPatchThatDoesNotMatchItsHash(t *testing.T) {
	s := newTestSource(t)
	s.dataset("one", "First", testPatches, nil, false)
	s.put("/one/patch-001.nqud", "", strings.Replace(testPatches[1], "2", "3", -1))
	im, err := Open(Config{Dir: t.TempDir(), Dataset: Dataset{CapabilityList: s.url("/one/capabilitylist.xml"), ChangeList: s.url("/one/changelist.xml")}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if err := im.Import(context.Background()); !errors.Is(err, ErrMismatch) {
		t.Fatalf("import: %v, want ErrMismatch", err)
	}
	if im.State().Patches != 1 {
		t.Fatalf("applied %d patches, want the one before the bad one", im.State().Patches)
	}
}

func TestImport_ResourceListPicksTheDatasetFile(t *testing.T) {
	s := newTestSource(t)
	s.dataset("single", "S", nil, []string{testFinal}, false)
	s.dataset("marked", "M", nil, []string{"<http://x/other> <http://x/p> \"o\" .\n", testFinal}, true)
	s.dataset("several", "V", nil, []string{"<http://x/other> <http://x/p> \"o\" .\n", testFinal}, false)
	ds := func(name string) Dataset {
		return Dataset{CapabilityList: s.url("/" + name + "/capabilitylist.xml"), ResourceList: s.url("/" + name + "/resourcelist.xml")}
	}
	for _, c := range []struct{ name, named, want string }{{"single", "", testFinal}, {"marked", "", testFinal}, {"several", "file1.nq", testFinal}} {
		im, err := Open(Config{Dir: t.TempDir(), Dataset: ds(c.name), DataSetFile: c.named})
		if err != nil {
			t.Fatal(err)
		}
		if err := im.Import(context.Background()); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := exportString(t, im); got != c.want || im.State().Mode != ModeResourceList {
			t.Fatalf("%s: %q", c.name, got)
		}
		im.Close()
	}
	im, err := Open(Config{Dir: t.TempDir(), Dataset: ds("several")})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	var ce *CandidatesError
	if err := im.Import(context.Background()); !errors.As(err, &ce) || len(ce.Files) != 2 || !strings.Contains(err.Error(), "file0.nq") {
		t.Fatalf("several files, none marked: %v", err)
	}
}

// A crash leaves the journal with a torn record: reopening applies the
// complete ones only, and drops the fetched patch of the torn one so the
// follower fetches it again.
func TestOpen_TornJournalAndUnappliedPatches(t *testing.T) {
	dir := t.TempDir()
	cl := "http://x/capabilitylist.xml"
	journal := journalStart + "x/1.nqud\n+<http://x/a> <http://x/p> \"1\" .\n" + journalEnd + "x/1.nqud\n" +
		journalStart + "x/2.nqud\n+<http://x/b> <http://x/p> \"2\" .\n" + journalEnd + "x/2.nq"
	if err := os.WriteFile(filepath.Join(dir, JournalFile), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x/1.nqud", "x/2.nqud"} {
		_ = os.MkdirAll(filepath.Join(dir, PatchDir, "x"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, PatchDir, p), []byte("+<http://x/a> <http://x/p> \"1\" .\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	im, err := Open(Config{Dir: dir, Dataset: Dataset{CapabilityList: cl}})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if got := exportString(t, im); got != "<http://x/a> <http://x/p> \"1\" .\n" {
		t.Fatalf("after replay: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, PatchDir, "x/2.nqud")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the torn patch's file is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, PatchDir, "x/1.nqud")); err != nil {
		t.Fatalf("an applied patch was removed: %v", err)
	}
	if err := im.applyPatchFile("x/1.nqud", "http://x/1.nqud"); err != nil || im.State().Patches != 0 {
		t.Fatalf("a patch delivered twice is applied once: %v %+v", err, im.State())
	}
	if _, err := Open(Config{Dir: dir, Dataset: Dataset{CapabilityList: "http://y/other.xml"}}); err == nil {
		t.Fatal("a directory of another dataset was accepted")
	}
}
