package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/piprate/json-gold/ld"
)

// RDF media types the importer reads (the seed's list; text/n3 is read as
// Turtle, which it extends).
const (
	MediaNQuads   = "application/n-quads"
	MediaNTriples = "application/n-triples"
	MediaTurtle   = "text/turtle"
	MediaTriG     = "application/trig"
	MediaN3       = "text/n3"
	MediaRDFXML   = "application/rdf+xml"
	MediaJSONLD   = "application/ld+json"
)

// ErrUnsupportedFormat is returned for a media type no reader handles.
var ErrUnsupportedFormat = errors.New("dataset: unsupported RDF format")

var extensions = map[string]string{
	".nq": MediaNQuads, ".nt": MediaNTriples, ".ttl": MediaTurtle, ".trig": MediaTriG, ".n3": MediaN3,
	".rdf": MediaRDFXML, ".owl": MediaRDFXML, ".xml": MediaRDFXML, ".jsonld": MediaJSONLD, ".json": MediaJSONLD,
	".nqud": MediaTypePatch,
}

// MediaType returns the RDF media type of a resource: the declared type
// (an entry's rs:md type, or a Content-Type) when it names a known format
// — the explicit type overrules the extension, as the seed says — else the
// one its loc's extension implies; "" when neither tells.
func MediaType(loc, declared string) string {
	if declared != "" {
		if mt, _, err := mime.ParseMediaType(declared); err == nil {
			mt = strings.ToLower(mt)
			if mt == "text/plain" { // N-Triples served as text
				mt = ""
			}
			for _, known := range extensions {
				if mt == known {
					return mt
				}
			}
		}
	}
	p := loc
	if u, err := url.Parse(loc); err == nil {
		p = u.Path
	}
	return extensions[strings.ToLower(path.Ext(p))]
}

// ParseRDF calls fn for each quad of an RDF document of the given media
// type: N-Quads, N-Triples, Turtle, TriG, N3 (its Turtle subset), RDF/XML
// or JSON-LD. base resolves relative IRIs (RDF/XML, Turtle, JSON-LD).
func ParseRDF(r io.Reader, mediaType, base string, fn func(Quad) error) error {
	switch mediaType {
	case MediaNQuads, MediaNTriples:
		return ReadQuads(r, fn)
	case MediaTurtle, MediaTriG, MediaN3:
		return ReadTurtle(r, base, fn)
	case MediaRDFXML:
		return ReadRDFXML(r, base, fn)
	case MediaJSONLD:
		return readJSONLD(r, base, fn)
	}
	return fmt.Errorf("%w: %q", ErrUnsupportedFormat, mediaType)
}

// readJSONLD converts JSON-LD to N-Quads with json-gold, then reads them.
func readJSONLD(r io.Reader, base string, fn func(Quad) error) error {
	doc, err := ld.DocumentFromReader(r)
	if err != nil {
		return fmt.Errorf("dataset: JSON-LD: %w", err)
	}
	opts := ld.NewJsonLdOptions(base)
	opts.Format = "application/n-quads"
	opts.DocumentLoader = noRemoteContexts{}
	out, err := ld.NewJsonLdProcessor().ToRDF(doc, opts)
	if err != nil {
		return fmt.Errorf("dataset: JSON-LD: %w", err)
	}
	s, _ := out.(string)
	return ReadQuads(strings.NewReader(s), fn)
}

// noRemoteContexts refuses to load a remote JSON-LD context: a
// description or dataset must not make the importer fetch arbitrary URLs.
type noRemoteContexts struct{}

// LoadDocument refuses every remote document.
func (noRemoteContexts) LoadDocument(u string) (*ld.RemoteDocument, error) {
	return nil, fmt.Errorf("dataset: JSON-LD remote context %s not loaded", u)
}

// Title predicates, in order of preference.
var titlePredicates = []string{"http://purl.org/dc/terms/title", "http://purl.org/dc/elements/1.1/title"}

// Title returns the dataset title among quads: the dcterms:title (else
// dc:title) of a subject that is not itself the object of another quad
// (the dataset, not a nested provenance or rights holder), preferring an
// English or untagged literal; ties go to the smallest subject.
func Title(quads []Quad) string {
	nested := map[Term]bool{}
	for _, q := range quads {
		if q.O.Kind != Literal {
			nested[q.O] = true
		}
	}
	type cand struct {
		rank  int
		subj  string
		title string
	}
	var cs []cand
	for _, q := range quads {
		for i, p := range titlePredicates {
			if q.P.Value != p || q.O.Kind != Literal {
				continue
			}
			rank := i * 4
			if nested[q.S] {
				rank += 2
			}
			if q.O.Lang != "" && !strings.HasPrefix(q.O.Lang, "en") {
				rank++
			}
			cs = append(cs, cand{rank, q.S.String(), strings.TrimSpace(q.O.Value)})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].rank != cs[j].rank {
			return cs[i].rank < cs[j].rank
		}
		if cs[i].subj != cs[j].subj {
			return cs[i].subj < cs[j].subj
		}
		return cs[i].title < cs[j].title
	})
	return cs[0].title
}

// FetchTitle fetches a dataset description and returns its Title. The
// format comes from the Content-Type, else the extension; Turtle,
// RDF/XML, N-Triples, N-Quads and JSON-LD are read.
func FetchTitle(ctx context.Context, client *http.Client, loc string) (string, error) {
	body, h, err := getBody(ctx, client, loc, "text/turtle, application/rdf+xml, application/n-triples, application/n-quads, application/ld+json;q=0.9, */*;q=0.1")
	if err != nil {
		return "", err
	}
	mt := MediaType(loc, h.Get("Content-Type"))
	if mt == "" {
		mt = sniff(body)
	}
	var quads []Quad
	if err := ParseRDF(bytes.NewReader(body), mt, loc, func(q Quad) error { quads = append(quads, q); return nil }); err != nil {
		return "", fmt.Errorf("dataset: description %s: %w", loc, err)
	}
	return Title(quads), nil
}

// sniff guesses the format of an untyped description.
func sniff(b []byte) string {
	t := bytes.TrimSpace(b)
	switch {
	case bytes.HasPrefix(t, []byte("<?xml")) || bytes.HasPrefix(t, []byte("<rdf:RDF")):
		return MediaRDFXML
	case bytes.HasPrefix(t, []byte("{")) || bytes.HasPrefix(t, []byte("[")):
		return MediaJSONLD
	case bytes.HasPrefix(t, []byte("@prefix")) || bytes.HasPrefix(t, []byte("PREFIX")) || bytes.HasPrefix(t, []byte("@base")):
		return MediaTurtle
	}
	return MediaNQuads
}
