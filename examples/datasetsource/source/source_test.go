package source_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/publisher"
	"github.com/rshub/rshub/examples/datasetsource/source"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// serve starts a Source in dir behind a test HTTP server.
func serve(t *testing.T, dir string, cfg source.Config) (*source.Source, *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cfg.Dir, cfg.PublicURL = dir, srv.URL
	src, err := source.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", src.Handler())
	return src, srv
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return resp, body
}

// doc fetches a ResourceSync document and requires it strictly valid.
func doc(t *testing.T, url string) *changefeed.Document {
	t.Helper()
	_, body := get(t, url)
	d, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Strict})
	if err != nil {
		t.Fatalf("GET %s: not strictly valid: %v\n%s", url, err, body)
	}
	if err := changefeed.Validate(d, changefeed.Options{}); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return d
}

func export(t *testing.T, s *dataset.Store) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.Export(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSource_TimbuctooLayoutValidates: from the Source Description to the
// patches, every document is strictly valid and says what Timbuctoo reads.
func TestSource_TimbuctooLayoutValidates(t *testing.T) {
	src, srv := serve(t, t.TempDir(), source.Config{Hub: "http://127.0.0.1:1/", QuadsPerEdit: 15, Seed: 3})
	if _, err := src.Edit(context.Background(), 6); err != nil {
		t.Fatal(err)
	}
	sd := doc(t, srv.URL+wire.PathWellKnown)
	if sd.MD.Capability != changefeed.CapDescription || len(sd.Entries) != 1 || sd.Entries[0].Loc != src.CapabilityListURL() ||
		sd.Entries[0].MD.Capability != changefeed.CapCapabilityList {
		t.Fatalf("Source Description: %+v", sd)
	}
	if got := linkOf(sd.Entries[0].Links, "describedby"); got != src.DescriptionURL() {
		t.Errorf("Source Description entry describedby %q, want %q", got, src.DescriptionURL())
	}
	cl := doc(t, src.CapabilityListURL())
	if cl.MD.Capability != changefeed.CapCapabilityList || cl.Link("up") != srv.URL+wire.PathWellKnown || cl.Link("describedby") != src.DescriptionURL() {
		t.Fatalf("Capability List: capability %q up %q describedby %q", cl.MD.Capability, cl.Link("up"), cl.Link("describedby"))
	}
	caps := map[changefeed.Capability]string{}
	for _, e := range cl.Entries {
		caps[e.MD.Capability] = e.Loc
	}
	if caps[changefeed.CapResourceList] != src.ResourceListURL() || caps[changefeed.CapChangeList] != src.ChangeListURL() || caps[changefeed.CapChangeNotification] != src.Topic() {
		t.Fatalf("Capability List entries: %v", caps)
	}
	rl := doc(t, src.ResourceListURL())
	resp, ds := get(t, src.DatasetURL())
	if len(rl.Entries) != 1 || rl.Entries[0].Loc != src.DatasetURL() || rl.Entries[0].MD.Type != source.MediaTypeNQuads ||
		rl.Entries[0].MD.Length != int64(len(ds)) || !strings.Contains(rl.Entries[0].MD.Hash, "sha-256:") || rl.MD.At.IsZero() {
		t.Fatalf("Resource List: %+v %+v", rl.MD, rl.Entries)
	}
	if resp.Header.Get("Content-Type") != source.MediaTypeNQuads || export(t, src.Current()) != string(ds) {
		t.Errorf("dataset.nq: Content-Type %q, equal to Current %v", resp.Header.Get("Content-Type"), export(t, src.Current()) == string(ds))
	}
	ch := doc(t, src.ChangeListURL())
	patches := src.Patches()
	if len(patches) != 7 || len(ch.Entries) != len(patches) || ch.MD.From.IsZero() || ch.Link("up") != src.CapabilityListURL() {
		t.Fatalf("Change List: %d entries, %d patches, from %q", len(ch.Entries), len(patches), ch.MD.From.Raw)
	}
	for i, e := range ch.Entries {
		p := patches[i]
		if e.Loc != src.PatchURL(p) || e.MD.Change != changefeed.Created || e.MD.Type != dataset.MediaTypePatch ||
			e.MD.Hash != p.Hash || e.MD.Length != p.Length || (i > 0 && !e.MD.DateTime.Time.After(ch.Entries[i-1].MD.DateTime.Time)) {
			t.Errorf("Change List entry %d: %+v %+v, patch %+v", i, e, e.MD, p)
		}
		resp, body := get(t, e.Loc)
		if resp.Header.Get("Content-Type") != dataset.MediaTypePatch || int64(len(body)) != p.Length {
			t.Errorf("patch %s: Content-Type %q, %d bytes, want %d", e.Loc, resp.Header.Get("Content-Type"), len(body), p.Length)
		}
	}
	// discovery entry points: Link headers and robots.txt
	for _, u := range []string{src.CapabilityListURL(), src.ChangeListURL(), src.ResourceListURL(), src.DatasetURL(), src.PatchURL(patches[0])} {
		resp, _ := get(t, u)
		ls := wire.ParseLinks(resp.Header.Values("Link"))
		if wire.FirstLink(ls, wire.RelResourceSync) != src.CapabilityListURL() || wire.FirstLink(ls, wire.RelDescribedBy) != src.DescriptionURL() {
			t.Errorf("GET %s: Link %q", u, resp.Header.Values("Link"))
		}
	}
	_, robots := get(t, srv.URL+wire.PathRobots)
	for _, want := range []string{"Sitemap: " + srv.URL + wire.PathWellKnown, "Sitemap: " + src.CapabilityListURL(), "Sitemap: " + src.ResourceListURL()} {
		if !strings.Contains(string(robots), want+"\n") {
			t.Errorf("robots.txt lacks %q:\n%s", want, robots)
		}
	}
	for _, bad := range []string{"/dataset1/changes/99.nqud", "/dataset1/changes/0000000099.nqud", "/dataset1/changes/..%2Fstate.json", "/dataset1/state.json"} {
		if r, err := http.Get(srv.URL + bad); err != nil || r.StatusCode != 404 {
			t.Errorf("GET %s: %v %v, want 404", bad, r.Status, err)
		}
	}
}

func linkOf(ls []changefeed.Link, rel string) string {
	for _, l := range ls {
		if l.Rel == rel {
			return l.Href
		}
	}
	return ""
}

// TestSource_PatchesInOrderGiveTheCurrentDataset: applying the Change
// List's patches, fetched over HTTP, in order to an empty store gives
// the current dataset (dataset.nq), blank nodes included.
func TestSource_PatchesInOrderGiveTheCurrentDataset(t *testing.T) {
	src, _ := serve(t, t.TempDir(), source.Config{QuadsPerEdit: 40, Seed: 9})
	if _, err := src.Edit(context.Background(), 30); err != nil {
		t.Fatal(err)
	}
	var st dataset.Store
	adds, retracts := 0, 0
	for _, e := range doc(t, src.ChangeListURL()).Entries {
		_, body := get(t, e.Loc)
		if !bytes.HasPrefix(body, []byte("--- dataset.nq\t")) {
			t.Errorf("patch %s does not start with a diff header: %.40q", e.Loc, body)
		}
		if _, err := st.ApplyPatch(bytes.NewReader(body)); err != nil {
			t.Fatalf("patch %s: %v", e.Loc, err)
		}
	}
	for _, p := range src.Patches()[1:] {
		adds, retracts = adds+p.Adds, retracts+p.Retracts
	}
	_, ds := get(t, src.DatasetURL())
	if got := export(t, &st); got != string(ds) || got != export(t, src.Current()) {
		t.Fatalf("patches applied in order: %d quads; dataset.nq: %d bytes; Current: %d quads", st.Len(), len(ds), src.Current().Len())
	}
	if adds == 0 || retracts == 0 || !strings.Contains(string(ds), "_:") {
		t.Errorf("edits made %d additions, %d retractions; blank nodes in the dataset: %v", adds, retracts, strings.Contains(string(ds), "_:"))
	}
}

// TestSource_RestartsFromItsDirectory: a Source opened again on its
// directory has the same patches and dataset and goes on with the same
// edits a Source that never stopped makes.
func TestSource_RestartsFromItsDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, _ := serve(t, dir, source.Config{Seed: 5})
	if _, err := a.Edit(ctx, 4); err != nil {
		t.Fatal(err)
	}
	b, _ := serve(t, dir, source.Config{Seed: 5})
	if export(t, b.Current()) != export(t, a.Current()) || len(b.Patches()) != 5 || b.Patches()[4] != a.Patches()[4] {
		t.Fatalf("reopened: %d patches, same dataset %v", len(b.Patches()), export(t, b.Current()) == export(t, a.Current()))
	}
	if _, err := b.Edit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	c, _ := serve(t, t.TempDir(), source.Config{Seed: 5})
	if _, err := c.Edit(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if export(t, b.Current()) != export(t, c.Current()) {
		t.Error("a restarted Source made other edits than one that never stopped")
	}
}

// TestSource_DescriptionNamesTheDataset: the description, in RDF/XML and
// N-Triples, gives the Capability List (a void:Dataset) its title.
func TestSource_DescriptionNamesTheDataset(t *testing.T) {
	src, _ := serve(t, t.TempDir(), source.Config{Description: source.Description{Title: "Brieven & <notities>"}})
	resp, nt := get(t, src.DescriptionNTriplesURL())
	if resp.Header.Get("Content-Type") != source.MediaTypeNTriples {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	found := map[string]string{}
	err := dataset.ReadQuads(bytes.NewReader(nt), func(q dataset.Quad) error {
		if q.S.Value == src.CapabilityListURL() {
			found[q.P.Value] = q.O.Value
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found["http://purl.org/dc/terms/title"] != "Brieven & <notities>" || found["http://www.w3.org/1999/02/22-rdf-syntax-ns#type"] != "http://rdfs.org/ns/void#Dataset" ||
		found["http://purl.org/dc/terms/license"] == "" || found["http://purl.org/dc/terms/rightsHolder"] == "" || found["http://purl.org/dc/terms/provenance"] == "" ||
		found["http://schema.org/ContactPoint"] == "" {
		t.Errorf("description of %s: %v", src.CapabilityListURL(), found)
	}
	resp, rx := get(t, src.DescriptionURL())
	var x struct {
		Descriptions []struct {
			About string `xml:"about,attr"`
			Title string `xml:"http://purl.org/dc/terms/ title"`
		} `xml:"http://www.w3.org/1999/02/22-rdf-syntax-ns# Description"`
	}
	if err := xml.Unmarshal(rx, &x); err != nil || resp.Header.Get("Content-Type") != source.MediaTypeRDFXML {
		t.Fatalf("RDF/XML: %v, Content-Type %q", err, resp.Header.Get("Content-Type"))
	}
	if len(x.Descriptions) != 1 || x.Descriptions[0].About != src.CapabilityListURL() || x.Descriptions[0].Title != "Brieven & <notities>" {
		t.Errorf("RDF/XML description: %+v\n%s", x, rx)
	}
}

// TestSource_PublishesEachPatchToAHub: over loopback to a real hub, each
// patch becomes one change notification naming it, in order, and the
// hub's Change List for the channel lists the patches as the Source's does.
func TestSource_PublishesEachPatchToAHub(t *testing.T) {
	h := servertest.Start(t, nil)
	topic := strings.TrimSuffix(h.HubURL, "/") + wire.TopicPath("demo")
	var acked []int
	src, _ := serve(t, t.TempDir(), source.Config{Hub: h.HubURL, Topic: topic, QuadsPerEdit: 10,
		Backoff: publisher.Backoff{Initial: 10 * time.Millisecond, Attempts: 3}, OnPublish: func(p source.Patch) { acked = append(acked, p.N) }})
	ctx := context.Background()
	if _, err := src.Edit(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := src.Announce(ctx); err != nil {
		t.Fatal(err)
	}
	if st := src.Status(); st.Published != 5 || st.Patches != 5 || len(acked) != 5 || acked[4] != 5 {
		t.Fatalf("status %+v, acknowledged %v", st, acked)
	}
	if err := src.Announce(ctx); err != nil || len(acked) != 5 {
		t.Fatalf("announcing again: %v, acknowledged %v", err, acked)
	}
	hubList := doc(t, strings.TrimSuffix(h.HubURL, "/")+wire.ChangeListPath("demo"))
	patches := src.Patches()
	if len(hubList.Entries) != len(patches) {
		t.Fatalf("hub's Change List: %d entries, want %d", len(hubList.Entries), len(patches))
	}
	for i, e := range hubList.Entries {
		if e.Loc != src.PatchURL(patches[i]) || e.MD.Hash != patches[i].Hash || e.MD.Length != patches[i].Length || e.MD.Type != dataset.MediaTypePatch {
			t.Errorf("hub entry %d: %s %+v, want patch %+v", i, e.Loc, e.MD, patches[i])
		}
	}
}

// failing is a transport that never reaches the hub.
type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, io.ErrUnexpectedEOF
}

// TestSource_AnnouncesAfterARestartWhatTheHubMissed: patches made while
// the hub could not be reached are announced, once each and in order, by
// the Source restarted on its directory.
func TestSource_AnnouncesAfterARestartWhatTheHubMissed(t *testing.T) {
	h := servertest.Start(t, nil)
	topic := strings.TrimSuffix(h.HubURL, "/") + wire.TopicPath("demo")
	dir := t.TempDir()
	ctx := context.Background()
	cfg := source.Config{Hub: h.HubURL, Topic: topic, Backoff: publisher.Backoff{Initial: time.Millisecond, Attempts: 2}}
	down := cfg
	down.Client = &http.Client{Transport: failing{}}
	a, _ := serve(t, dir, down)
	if _, err := a.Edit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := a.Announce(ctx); err == nil || a.Status().Published != 0 || a.Status().LastError == "" {
		t.Fatalf("announce without a hub: %v, status %+v", err, a.Status())
	}
	b, _ := serve(t, dir, cfg)
	if err := b.Announce(ctx); err != nil {
		t.Fatal(err)
	}
	if st := b.Status(); st.Published != 3 || st.LastError != "" {
		t.Fatalf("after the restart: %+v", st)
	}
	hubList := doc(t, strings.TrimSuffix(h.HubURL, "/")+wire.ChangeListPath("demo"))
	if len(hubList.Entries) != 3 {
		t.Fatalf("hub's Change List: %d entries, want 3 (one per patch)", len(hubList.Entries))
	}
	for i, e := range hubList.Entries { // a's and b's test servers differ: compare the paths
		if want := "/dataset1/changes/" + b.Patches()[i].File; !strings.HasSuffix(e.Loc, want) {
			t.Errorf("hub entry %d: %s, want …%s", i, e.Loc, want)
		}
	}
}
