package changefeed

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// addSeeds adds every spec fixture and the hand-written documents of the
// tests to a fuzz corpus.
func addSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/spec/*.xml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(foreignDoc))
	for _, c := range ruleCases {
		f.Add([]byte(c.xml))
	}
}

// checkErr fails unless err is nil, io.EOF or a *ValidationError.
func checkErr(t *testing.T, err error) {
	t.Helper()
	var ve *ValidationError
	if err != nil && err != io.EOF && !errors.As(err, &ve) {
		t.Fatalf("error of type %T: %v", err, err)
	}
	if ve != nil && (ve.Rule == "" || ve.Msg == "") {
		t.Fatalf("incomplete error %#v", ve)
	}
}

func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []Mode{Strict, Lenient} {
			doc, err := Parse(bytes.NewReader(data), Options{Mode: mode, MaxBytes: 1 << 20, MaxEntries: 1000})
			checkErr(t, err)
			if err != nil {
				continue
			}
			if err := Validate(doc, Options{Mode: mode}); err != nil {
				t.Fatalf("%s: Parse accepted what Validate rejects: %v", mode, err)
			}
		}
		// Strict acceptance implies Lenient acceptance.
		if _, err := Parse(bytes.NewReader(data), Options{}); err == nil {
			if _, err := Parse(bytes.NewReader(data), Options{Mode: Lenient}); err != nil {
				t.Fatalf("strict accepts, lenient rejects: %v", err)
			}
		}
	})
}

func FuzzDecoderStream(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		// Read in small, irregular pieces and compare with Parse.
		whole, werr := Parse(bytes.NewReader(data), Options{Mode: Lenient})
		d := NewDecoder(&chunkReader{data: data}, Options{Mode: Lenient})
		h, err := d.Header()
		checkErr(t, err)
		var entries []Entry
		for err == nil {
			var e *Entry
			e, err = d.Next()
			checkErr(t, err)
			if err == nil {
				entries = append(entries, *e)
			}
		}
		if (werr == nil) != (err == io.EOF) {
			t.Fatalf("Parse error %v, stream error %v", werr, err)
		}
		if werr != nil {
			if werr.Error() != err.Error() {
				t.Fatalf("Parse error %q, stream error %q", werr, err)
			}
			return
		}
		if len(entries) == 0 {
			entries = nil
		}
		got := &Document{Header: *h, Entries: entries, Trailer: d.Trailer()}
		if !reflect.DeepEqual(got, whole) {
			t.Fatal("streamed model differs from Parse")
		}
	})
}

type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.n++
	k := min(len(p), len(r.data), 1+r.n%7)
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

func FuzzRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mode := range []Mode{Strict, Lenient} {
			opt := Options{Mode: mode}
			doc, err := Parse(bytes.NewReader(data), opt)
			if err != nil {
				continue
			}
			var out bytes.Buffer
			if err := Encode(&out, doc); err != nil {
				t.Fatalf("%s: encode of a decoded document: %v", mode, err)
			}
			doc2, err := Parse(bytes.NewReader(out.Bytes()), opt)
			if err != nil {
				t.Fatalf("%s: re-parse: %v\n%s", mode, err, out.Bytes())
			}
			if !reflect.DeepEqual(doc, doc2) {
				t.Fatalf("%s: round trip changed the model\n%s", mode, out.Bytes())
			}
		}
	})
}

// FuzzTokenizerOracle compares the tokenizer with encoding/xml. When ours
// accepts, encoding/xml must accept too and produce the same elements,
// attributes and text. When encoding/xml accepts a document inside the
// subset we claim (no directives, single root, ASCII names, declared
// prefixes, no "]]>" in text), ours must accept it unless a limit applies.
func FuzzTokenizerOracle(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, oerr := ourTokens(data)
		theirs, inSubset, xerr := stdTokens(data)
		if oerr == nil {
			if xerr != nil {
				t.Fatalf("we accept, encoding/xml rejects: %v", xerr)
			}
			if !reflect.DeepEqual(ours, theirs) {
				t.Fatalf("token streams differ\nours:   %q\ntheirs: %q", ours, theirs)
			}
			return
		}
		// encoding/xml checks no namespace constraints (empty or
		// malformed prefixes, undeclared prefixes, xml/xmlns bindings).
		if xerr == nil && inSubset && !errors.Is(oerr, RuleLimits) && !errors.Is(oerr, RuleNamespaces) && !stricterThanStd(oerr) {
			t.Fatalf("encoding/xml accepts, we reject: %v", oerr)
		}
	})
}

// stricterThanStd reports well-formedness errors that encoding/xml is known
// not to detect.
func stricterThanStd(err error) bool {
	for _, s := range []string{
		"missing space before attribute", // encoding/xml accepts a="1"b="2"
		"duplicate attribute",            // encoding/xml does not check uniqueness
		"duplicate namespace declaration",
		"XML declaration", // encoding/xml ignores version/standalone details
		"malformed XML declaration",
		"malformed processing instruction", // encoding/xml accepts <?a!?>
		"invalid character or UTF-8 in comment",
		"invalid character or UTF-8 in processing instruction",
	} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// ourTokens renders the tokenizer's stream as strings: "<{ns}local a=v ...",
// ">" for an end tag, text merged between tags.
func ourTokens(data []byte) ([]string, error) {
	t := newTokenizer(bytes.NewReader(data), 1<<20)
	var out []string
	var text []byte
	flush := func() {
		if len(text) > 0 {
			out = append(out, "T"+string(text))
			text = text[:0]
		}
	}
	for {
		k, err := t.next()
		if err != nil {
			return nil, err
		}
		switch k {
		case tokEOF:
			flush()
			return out, nil
		case tokText:
			text = append(text, t.text...)
		case tokStart:
			flush()
			s := "<{" + normSpace(t.space) + "}" + string(t.local)
			for _, a := range t.attrs {
				s += " {" + normSpace(a.space) + "}" + string(a.local) + "=" + normSpace(string(a.value))
			}
			out = append(out, s)
		case tokEnd:
			flush()
			out = append(out, ">")
		}
	}
}

func normSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

func stdTokens(data []byte) (out []string, inSubset bool, err error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	inSubset = true
	if !isASCII(data) || bytes.Contains(data, []byte("]]>")) && !bytes.Contains(data, []byte("<![CDATA[")) {
		inSubset = false
	}
	depth, roots := 0, 0
	var text []byte
	flush := func() {
		if len(text) > 0 {
			if depth > 0 {
				out = append(out, "T"+string(text))
			} else if !allSpace(text) {
				inSubset = false
			}
			text = text[:0]
		}
	}
	declared := map[string]bool{"xml": true, "xmlns": true}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			flush()
			if roots != 1 || depth != 0 {
				return nil, false, errors.New("not one root")
			}
			break
		}
		if err != nil {
			return nil, inSubset, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			flush()
			if depth == 0 {
				roots++
			}
			depth++
			for _, a := range tok.Attr {
				if a.Name.Space == "xmlns" {
					declared[a.Name.Local] = true
				}
				if a.Name.Space != "" && !declared[a.Name.Space] || strings.Contains(a.Name.Local, ":") {
					inSubset = false
				}
			}
			if tok.Name.Space != "" && !declared[tok.Name.Space] || strings.Contains(tok.Name.Local, ":") {
				inSubset = false
			}
		case xml.EndElement:
			flush()
			depth--
		case xml.CharData:
			text = append(text, tok...)
		case xml.Directive:
			inSubset = false
		case xml.ProcInst:
			if strings.EqualFold(tok.Target, "xml") {
				inSubset = false
			}
		}
	}
	// Second pass with namespace resolution for the comparison.
	d = xml.NewDecoder(bytes.NewReader(data))
	out = out[:0]
	depth = 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, inSubset, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			flush()
			depth++
			s := "<{" + normSpace(tok.Name.Space) + "}" + tok.Name.Local
			for _, a := range tok.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				s += " {" + normSpace(a.Name.Space) + "}" + a.Name.Local + "=" + normSpace(a.Value)
			}
			out = append(out, s)
		case xml.EndElement:
			flush()
			depth--
			out = append(out, ">")
		case xml.CharData:
			text = append(text, tok...)
		}
	}
	flush()
	return out, inSubset, nil
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
