package source

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// The Source's URL paths.
const (
	PathDescription    = "/.well-known/resourcesync"
	PathCapabilityList = "/capabilitylist.xml"
	PathIndex          = "/changelist-index.xml"   // ModeIndex
	PathChangeList     = "/changelist.xml"         // ModeSimulator, ModeArchive: the open list
	PathArchive        = "/changelist-archive.xml" // ModeArchive
	PathResourceList   = "/resourcelist.xml"       // ModeResourceList
	PathResourceIndex  = "/resourcelist-index.xml" // ModeResourceListIndex
)

// ServeHTTP serves the documents and the resources.
func (s *Source) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests++
	fault := s.fault
	s.mu.Unlock()
	switch fault {
	case Fault5xx:
		w.Header().Set("Retry-After", "0")
		http.Error(w, "the Source is down", http.StatusServiceUnavailable)
		return
	case FaultTimeout:
		<-r.Context().Done()
		return
	case FaultGarbage:
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte("\x00\x01 this is not <xml"))
		return
	}
	if content, ok := s.resource(r.URL.Path); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		s.count(len(content))
		_, _ = w.Write(content)
		return
	}
	body, start, closed, ok := s.document(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", start.Format(http.TimeFormat))
	w.Header().Set("Content-Type", "application/xml")
	if closed {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "max-age=0")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.count(len(body))
	_, _ = w.Write(body)
}

func (s *Source) count(n int) {
	s.mu.Lock()
	s.bytes += n
	s.mu.Unlock()
}

// resource answers a resource's current content; ok is false for a path
// that is no resource or one deleted.
func (s *Source) resource(path string) ([]byte, bool) {
	name := strings.TrimPrefix(path, "/")
	if !strings.HasPrefix(name, "res-") {
		return nil, false
	}
	b, ok := s.Files()[name]
	return b, ok
}

const (
	xmlHead = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	ns      = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"`
)

// document renders the document at path, with the start of the history
// (its Last-Modified), and reports whether it is a closed list.
func (s *Source) document(path string) (body []byte, start time.Time, closed, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, closed, ok = s.documentLocked(path)
	return body, s.start, closed, ok
}

// documentLocked is document's body; s.mu is held.
func (s *Source) documentLocked(path string) (body []byte, closed, ok bool) {
	var b bytes.Buffer
	b.WriteString(xmlHead)
	switch path {
	case PathDescription:
		fmt.Fprintf(&b, `<urlset %s><rs:md capability="description"/><url><loc>%s%s</loc><rs:md capability="capabilitylist"/></url></urlset>`, ns, s.base, PathCapabilityList)
		return b.Bytes(), false, true
	case PathCapabilityList:
		s.capabilityList(&b)
		return b.Bytes(), false, true
	case PathIndex:
		if s.cfg.Mode != ModeIndex {
			return nil, false, false
		}
		s.index(&b)
		return b.Bytes(), false, true
	case PathArchive:
		if s.cfg.Mode != ModeArchive {
			return nil, false, false
		}
		s.archive(&b)
		return b.Bytes(), false, true
	case PathResourceList, PathResourceIndex:
		if (path == PathResourceList) != (s.cfg.Mode == ModeResourceList) || (path == PathResourceIndex) != (s.cfg.Mode == ModeResourceListIndex) {
			return nil, false, false
		}
		s.resourceList(&b, -1)
		return b.Bytes(), false, true
	case PathChangeList:
		switch s.cfg.Mode {
		case ModeSimulator:
			s.list(&b, s.start, s.now(), 0, len(s.history))
		case ModeArchive:
			k := len(s.starts) - 1
			from, _ := s.window(k)
			s.list(&b, from, time.Time{}, s.starts[k], len(s.history))
		default:
			return nil, false, false
		}
		return b.Bytes(), false, true
	}
	var k int
	if _, err := fmt.Sscanf(path, "/resourcelist/%05d.xml", &k); err == nil && s.cfg.Mode == ModeResourceListIndex {
		s.resourceList(&b, k)
		return b.Bytes(), false, true
	}
	if _, err := fmt.Sscanf(path, "/changelist/%05d.xml", &k); err != nil || k < 1 || k > len(s.starts) || s.cfg.Mode == ModeSimulator {
		return nil, false, false
	}
	k--
	from, until := s.window(k)
	if s.cfg.Mode == ModeArchive && until.IsZero() {
		return nil, false, false // the open list is served at PathChangeList
	}
	s.list(&b, from, until, s.starts[k], s.end(k))
	return b.Bytes(), !until.IsZero(), true
}

// capabilityList renders the Capability List of the Source's mode.
func (s *Source) capabilityList(b *bytes.Buffer) {
	fmt.Fprintf(b, `<urlset %s><rs:ln rel="up" href="%s%s"/><rs:md capability="capabilitylist"/>`, ns, s.base, PathDescription)
	switch s.cfg.Mode {
	case ModeIndex:
		fmt.Fprintf(b, `<url><loc>%s%s</loc><rs:md capability="changelist"/></url>`, s.base, PathIndex)
	case ModeSimulator:
		fmt.Fprintf(b, `<url><loc>%s%s</loc><rs:md capability="changelist"/></url>`, s.base, PathChangeList)
	case ModeArchive:
		fmt.Fprintf(b, `<url><loc>%s%s</loc><rs:md capability="changelist"/></url>`, s.base, PathChangeList)
		fmt.Fprintf(b, `<url><loc>%s%s</loc><rs:md capability="changelist-archive"/></url>`, s.base, PathArchive)
	case ModeResourceList:
		fmt.Fprintf(b, `<url><loc>%s%s</loc><rs:md capability="resourcelist"/></url>`, s.base, PathResourceList)
	case ModeResourceListIndex:
		fmt.Fprintf(b, `<url><loc>%s%s</loc><rs:md capability="resourcelist"/></url>`, s.base, PathResourceIndex)
	}
	b.WriteString(`</urlset>`)
}

// index renders the Change List Index: every list, the last one open.
func (s *Source) index(b *bytes.Buffer) {
	fmt.Fprintf(b, `<sitemapindex %s><rs:ln rel="up" href="%s%s"/><rs:md capability="changelist" from="%s"/>`, ns, s.base, PathCapabilityList, fmtT(s.start))
	for k := range s.starts {
		from, until := s.window(k)
		fmt.Fprintf(b, `<sitemap><loc>%s/changelist/%05d.xml</loc><rs:md capability="changelist" from="%s"%s/></sitemap>`, s.base, k+1, fmtT(from), untilAttr(until))
	}
	b.WriteString(`</sitemapindex>`)
}

// archive renders the Change List Archive: every closed list.
func (s *Source) archive(b *bytes.Buffer) {
	fmt.Fprintf(b, `<urlset %s><rs:ln rel="up" href="%s%s"/><rs:md capability="changelist-archive"/>`, ns, s.base, PathCapabilityList)
	for k := 0; k+1 < len(s.starts); k++ {
		from, until := s.window(k)
		fmt.Fprintf(b, `<url><loc>%s/changelist/%05d.xml</loc><rs:md from="%s"%s/></url>`, s.base, k+1, fmtT(from), untilAttr(until))
	}
	b.WriteString(`</urlset>`)
}

// resourceList renders the resources as they are, by name: the Resource
// List (part -1 in ModeResourceList), the Resource List Index (part -1 in
// ModeResourceListIndex) or its sitemap part (1…), of RotateEvery
// resources each.
func (s *Source) resourceList(b *bytes.Buffer, part int) {
	cur := s.current()
	names := make([]string, 0, len(cur))
	for loc := range cur {
		names = append(names, loc)
	}
	slices.Sort(names)
	at := fmtT(s.last())
	if part < 0 && s.cfg.Mode == ModeResourceListIndex {
		fmt.Fprintf(b, `<sitemapindex %s><rs:ln rel="up" href="%s%s"/><rs:md capability="resourcelist" at="%s"/>`, ns, s.base, PathCapabilityList, at)
		for k := 0; k == 0 || k*s.cfg.RotateEvery < len(names); k++ {
			fmt.Fprintf(b, `<sitemap><loc>%s/resourcelist/%05d.xml</loc></sitemap>`, s.base, k+1)
		}
		b.WriteString(`</sitemapindex>`)
		return
	}
	if part > 0 {
		lo := min((part-1)*s.cfg.RotateEvery, len(names))
		names = names[lo:min(lo+s.cfg.RotateEvery, len(names))]
	}
	fmt.Fprintf(b, `<urlset %s><rs:ln rel="up" href="%s%s"/><rs:md capability="resourcelist" at="%s"/>`, ns, s.base, PathCapabilityList, at)
	for _, loc := range names {
		i := cur[loc]
		fmt.Fprintf(b, "\n<url><loc>%s/%s</loc><lastmod>%s</lastmod><rs:md%s/></url>", s.base, loc, fmtT(s.history[i].DateTime), fixity(loc, i))
	}
	b.WriteString("\n</urlset>")
}

// fixity is the hash and length attributes of a resource after change i.
func fixity(loc string, i int) string {
	content := contentOf(loc, i)
	sum := md5.Sum(content)
	return fmt.Sprintf(` hash="md5:%s" length="%d"`, hex.EncodeToString(sum[:]), len(content))
}

// list renders a Change List of changes [lo, hi) of the history.
func (s *Source) list(b *bytes.Buffer, from, until time.Time, lo, hi int) {
	fromAttr := ` from="` + fmtT(from) + `"`
	if s.cfg.OmitFrom {
		fromAttr = ""
	}
	fmt.Fprintf(b, `<urlset %s><rs:ln rel="up" href="%s%s"/><rs:md capability="changelist"%s%s/>`, ns, s.base, PathCapabilityList, fromAttr, untilAttr(until))
	order := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		order = append(order, i)
	}
	if s.cfg.Disorder {
		for j := 0; j+1 < len(order); j += 2 {
			order[j], order[j+1] = order[j+1], order[j]
		}
	}
	for _, i := range order {
		c := s.history[i]
		loc := s.base + "/" + c.Loc
		if s.cfg.RelativeLocs {
			loc = "/" + c.Loc
		}
		fix := ""
		if c.Change != changefeed.Deleted {
			fix = fixity(c.Loc, i)
		}
		fmt.Fprintf(b, "\n<url><loc>%s</loc><rs:md change=\"%s\" datetime=\"%s\"%s/></url>", loc, c.Change, fmtT(c.DateTime), fix)
	}
	if s.cfg.Timeless {
		fmt.Fprintf(b, "\n<url><loc>%s/res-timeless</loc><rs:md change=\"updated\"/></url>", s.base)
	}
	b.WriteString("\n</urlset>")
}

func untilAttr(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ` until="` + fmtT(t) + `"`
}

func fmtT(t time.Time) string { return t.UTC().Format(time.RFC3339) }
