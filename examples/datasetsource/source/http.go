package source

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/wire"
)

// Paths under a dataset's directory, /{name}/.
const (
	capabilityListFile = wire.CapabilityListFile // "capabilitylist.xml", as the hub names it
	descriptionXMLFile = "description.xml"
	descriptionNTFile  = "description.nt"
	resourceListFile   = "resourcelist.xml"
	changeListFile     = "changelist.xml"
	topicFile          = "topic"
)

// SourceDescriptionURL returns the URL of the Source Description.
func (s *Source) SourceDescriptionURL() string {
	return strings.TrimSuffix(s.cfg.PublicURL, "/") + wire.PathWellKnown
}

// CapabilityListURL returns the URL of the dataset's Capability List,
// which is also the subject of the dataset description.
func (s *Source) CapabilityListURL() string { return s.base + "/" + capabilityListFile }

// DescriptionURL returns the URL of the dataset description in RDF/XML
// (the Capability List's first rs:ln rel="describedby").
func (s *Source) DescriptionURL() string { return s.base + "/" + descriptionXMLFile }

// DescriptionNTriplesURL returns the URL of the same description as
// N-Triples (the second rs:ln rel="describedby").
func (s *Source) DescriptionNTriplesURL() string { return s.base + "/" + descriptionNTFile }

// ResourceListURL returns the URL of the Resource List.
func (s *Source) ResourceListURL() string { return s.base + "/" + resourceListFile }

// ChangeListURL returns the URL of the Change List.
func (s *Source) ChangeListURL() string { return s.base + "/" + changeListFile }

// DatasetURL returns the URL of the current dataset (dataset.nq).
func (s *Source) DatasetURL() string { return s.base + "/" + datasetFile }

// PatchURL returns the URL of patch p.
func (s *Source) PatchURL(p Patch) string { return s.base + "/" + changesDir + "/" + p.File }

// Topic returns the topic URI the Source publishes to.
func (s *Source) Topic() string { return s.cfg.Topic }

// Handler serves the Source's documents, dataset and patches.
func (s *Source) Handler() http.Handler {
	mux := http.NewServeMux()
	dir := "/" + s.cfg.Name + "/"
	mux.HandleFunc("GET "+wire.PathWellKnown, s.serveDescription)
	mux.HandleFunc("GET "+wire.PathRobots, s.serveRobots)
	mux.HandleFunc("GET "+dir+capabilityListFile, s.serveCapabilityList)
	mux.HandleFunc("GET "+dir+descriptionXMLFile, s.serveDatasetDescription(MediaTypeRDFXML))
	mux.HandleFunc("GET "+dir+descriptionNTFile, s.serveDatasetDescription(MediaTypeNTriples))
	mux.HandleFunc("GET "+dir+resourceListFile, s.serveResourceList)
	mux.HandleFunc("GET "+dir+changeListFile, s.serveChangeList)
	mux.HandleFunc("GET "+dir+datasetFile, s.serveDataset)
	mux.HandleFunc("GET "+dir+changesDir+"/{file}", s.servePatch)
	mux.HandleFunc("GET "+dir+topicFile, s.serveTopic)
	mux.HandleFunc("GET /status", s.serveStatus)
	return mux
}

func md() *changefeed.MD { return &changefeed.MD{Length: -1} }

func ln(rel, href, typ string) changefeed.Link {
	return changefeed.Link{Rel: rel, Href: href, Type: typ, Length: -1, Pri: -1}
}

// describedBy returns the rs:ln rel="describedby" links to the dataset
// description, RDF/XML first.
func (s *Source) describedBy() []changefeed.Link {
	return []changefeed.Link{ln("describedby", s.DescriptionURL(), MediaTypeRDFXML), ln("describedby", s.DescriptionNTriplesURL(), MediaTypeNTriples)}
}

// setLinks sets the Link header of a dataset document: its Capability
// List (resourcesync), its parent (up) when it has one, and the dataset
// description (describedby).
func (s *Source) setLinks(w http.ResponseWriter, up string) {
	w.Header().Set(wire.HeaderLink, wire.FormatLinks(
		wire.Link{Href: s.CapabilityListURL(), Rels: []string{wire.RelResourceSync}},
		wire.Link{Href: up, Rels: []string{wire.RelUp}},
		wire.Link{Href: s.DescriptionURL(), Rels: []string{wire.RelDescribedBy}},
	))
}

func writeDoc(w http.ResponseWriter, doc *changefeed.Document) {
	w.Header().Set("Content-Type", "application/xml")
	_ = changefeed.Encode(w, doc)
}

func (s *Source) serveDescription(w http.ResponseWriter, _ *http.Request) {
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapDescription
	e := changefeed.Entry{Loc: s.CapabilityListURL(), MD: md(), Links: s.describedBy()[:1]}
	e.MD.Capability = changefeed.CapCapabilityList
	doc.Entries = []changefeed.Entry{e}
	writeDoc(w, doc)
}

func (s *Source) serveRobots(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("User-agent: *\nDisallow:\n\nSitemap: " + s.SourceDescriptionURL() + "\nSitemap: " + s.CapabilityListURL() + "\nSitemap: " + s.ResourceListURL() + "\n"))
}

func (s *Source) serveCapabilityList(w http.ResponseWriter, _ *http.Request) {
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapCapabilityList
	doc.Links = append([]changefeed.Link{ln("up", s.SourceDescriptionURL(), "")}, s.describedBy()...)
	rl := changefeed.Entry{Loc: s.ResourceListURL(), MD: md()}
	rl.MD.Capability = changefeed.CapResourceList
	cl := changefeed.Entry{Loc: s.ChangeListURL(), MD: md()}
	cl.MD.Capability = changefeed.CapChangeList
	doc.Entries = []changefeed.Entry{rl, cl}
	if s.cfg.Hub != "" {
		cn := changefeed.Entry{Loc: s.cfg.Topic, MD: md(), Links: []changefeed.Link{ln("hub", s.cfg.Hub, "")}}
		cn.MD.Capability = changefeed.CapChangeNotification
		doc.Entries = append(doc.Entries, cn)
	}
	s.setLinks(w, s.SourceDescriptionURL())
	writeDoc(w, doc)
}

func (s *Source) serveDatasetDescription(mediaType string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", mediaType)
		if mediaType == MediaTypeNTriples {
			_, _ = w.Write(nTriples(descriptionTriples(s.CapabilityListURL(), s.cfg.Description)))
			return
		}
		_, _ = w.Write(rdfXML(s.CapabilityListURL(), s.cfg.Description))
	}
}

// serveResourceList lists the one dataset file, as of the last patch.
func (s *Source) serveResourceList(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	data, last := s.export, s.st.Patches[len(s.st.Patches)-1]
	s.mu.Unlock()
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapResourceList
	doc.MD.At = changefeed.NewDateTime(last.Time)
	doc.Links = []changefeed.Link{ln("up", s.CapabilityListURL(), "")}
	e := changefeed.Entry{Loc: s.DatasetURL(), LastMod: changefeed.NewDateTime(last.Time), MD: md()}
	e.MD.Hash, e.MD.Length, e.MD.Type = hashOf(data), int64(len(data)), MediaTypeNQuads
	doc.Entries = []changefeed.Entry{e}
	s.setLinks(w, s.CapabilityListURL())
	writeDoc(w, doc)
}

// serveChangeList lists every patch, forward chronological.
func (s *Source) serveChangeList(w http.ResponseWriter, _ *http.Request) {
	patches := s.Patches()
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapChangeList
	doc.MD.From = changefeed.NewDateTime(patches[0].Time)
	doc.Links = []changefeed.Link{ln("up", s.CapabilityListURL(), "")}
	for _, p := range patches {
		e := changefeed.Entry{Loc: s.PatchURL(p), LastMod: changefeed.NewDateTime(p.Time), MD: md()}
		e.MD.Change, e.MD.DateTime = changefeed.Created, changefeed.NewDateTime(p.Time)
		e.MD.Hash, e.MD.Length, e.MD.Type = p.Hash, p.Length, dataset.MediaTypePatch
		doc.Entries = append(doc.Entries, e)
	}
	s.setLinks(w, s.CapabilityListURL())
	writeDoc(w, doc)
}

func (s *Source) serveDataset(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	data := s.export
	s.mu.Unlock()
	w.Header().Set("Content-Type", MediaTypeNQuads)
	s.setLinks(w, "")
	_, _ = w.Write(data)
}

// servePatch serves a patch the state names (no other file of the
// directory is reachable).
func (s *Source) servePatch(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	n, err := strconv.Atoi(strings.TrimSuffix(file, ".nqud"))
	if err != nil || n < 1 || file != patchFile(n) {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	known := n >= 1 && n <= len(s.st.Patches)
	s.mu.Unlock()
	if !known {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", dataset.MediaTypePatch)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	s.setLinks(w, "")
	http.ServeFile(w, r, filepath.Join(s.cfg.Dir, changesDir, patchFile(n)))
}

// serveTopic answers for the default topic URI (RS Change Notification
// 1.0.1 §4.1): 200, application/xml, Link self and hub, no content.
func (s *Source) serveTopic(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set(wire.HeaderLink, wire.NotificationLinks(s.cfg.Topic, s.cfg.Hub, s.CapabilityListURL())+
		", "+wire.FormatLinks(wire.Link{Href: s.DescriptionURL(), Rels: []string{wire.RelDescribedBy}}))
	w.Header().Set("Content-Length", "0")
}

func (s *Source) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.Status())
}

// validName reports whether name can be the dataset's path segment.
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
