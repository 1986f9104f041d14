package source

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

func md() *changefeed.MD { return &changefeed.MD{Length: -1} }

func writeDoc(w http.ResponseWriter, doc *changefeed.Document) {
	w.Header().Set("Content-Type", "application/xml")
	_ = changefeed.Encode(w, doc)
}

func (s *Source) serveDescription(w http.ResponseWriter, _ *http.Request) {
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapDescription
	e := changefeed.Entry{Loc: s.cfg.PublicURL + capabilityListPath, MD: md()}
	e.MD.Capability = changefeed.CapCapabilityList
	doc.Entries = []changefeed.Entry{e}
	writeDoc(w, doc)
}

func (s *Source) serveCapabilityList(w http.ResponseWriter, _ *http.Request) {
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapCapabilityList
	doc.Links = []changefeed.Link{{Rel: "up", Href: s.cfg.PublicURL + wire.PathWellKnown, Length: -1, Pri: -1}}
	rl := changefeed.Entry{Loc: s.cfg.PublicURL + "/resourcelist.xml", MD: md()}
	rl.MD.Capability = changefeed.CapResourceList
	cn := changefeed.Entry{Loc: s.cfg.Topic, MD: md(), Links: []changefeed.Link{{Rel: "hub", Href: s.cfg.Hub, Length: -1, Pri: -1}}}
	cn.MD.Capability = changefeed.CapChangeNotification
	doc.Entries = []changefeed.Entry{rl, cn}
	writeDoc(w, doc)
}

// capabilityListPath is where the Source serves its Capability List: at
// its root, under the name the hub uses too.
const capabilityListPath = "/" + wire.CapabilityListFile

// serveResourceList lists the files as of the last acknowledged
// notification, with "at" its until, so a destination that takes it as a
// baseline continues with the notifications after it.
func (s *Source) serveResourceList(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	snap, at := s.snapshot, s.at
	s.mu.Unlock()
	doc := &changefeed.Document{Header: changefeed.Header{Kind: changefeed.URLSet, MD: *md()}}
	doc.MD.Capability = changefeed.CapResourceList
	doc.MD.At = changefeed.NewDateTime(at)
	doc.Links = []changefeed.Link{{Rel: "up", Href: s.cfg.PublicURL + capabilityListPath, Length: -1, Pri: -1}}
	paths := make([]string, 0, len(snap))
	for p := range snap {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := snap[p]
		e := changefeed.Entry{Loc: s.FileURL(p), MD: md(), LastMod: changefeed.NewDateTime(f.ModTime)}
		e.MD.Hash, e.MD.Length = f.hash(), f.Size
		doc.Entries = append(doc.Entries, e)
	}
	writeDoc(w, doc)
}

// serveFile serves a file of the directory; os.Root keeps it inside.
func (s *Source) serveFile(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	root, err := os.OpenRoot(s.cfg.Dir)
	if err != nil {
		http.Error(w, "directory unavailable", http.StatusInternalServerError)
		return
	}
	defer root.Close()
	f, err := root.Open(rel)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && strings.Contains(err.Error(), "escapes")) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "cannot open", http.StatusForbidden)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// serveTopic answers for the topic URI (RS Change Notification 1.0.1
// §4.1): 200, application/xml, Link self and hub, no content.
func (s *Source) serveTopic(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set(wire.HeaderLink, wire.NotificationLinks(s.cfg.Topic, s.cfg.Hub, s.cfg.PublicURL+capabilityListPath))
	w.Header().Set("Content-Length", "0")
}

func (s *Source) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.Status())
}
