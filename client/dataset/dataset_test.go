package dataset

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

func iri(s string) Term { return Term{Kind: IRI, Value: s} }

func TestParseQuad_Terms(t *testing.T) {
	cases := []struct {
		line string
		want Quad
	}{
		{`<http://a/s> <http://a/p> <http://a/o> .`, Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: iri("http://a/o")}},
		{`<http://a/s> <http://a/p> "x" <http://a/g> .`, Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "x"}, G: iri("http://a/g")}},
		{"_:b1\t<http://a/p>\t\"chat\"@FR-be . # comment", Quad{S: Term{Kind: Blank, Value: "b1"}, P: iri("http://a/p"), O: Term{Kind: Literal, Value: "chat", Lang: "fr-be"}}},
		{`<http://a/s> <http://a/p> "436052"^^<http://schema.org/longitude> .`, Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "436052", Datatype: "http://schema.org/longitude"}}},
		{`<http://a/s> <http://a/p> "s"^^<http://www.w3.org/2001/XMLSchema#string> .`, Quad{S: iri("http://a/s"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "s"}}},
		{`<http://a/\u00E9> <http://a/p> "a\"b\\c\nd\u00e9\U0001F600" _:g.x .`, Quad{S: iri("http://a/é"), P: iri("http://a/p"), O: Term{Kind: Literal, Value: "a\"b\\c\nd\u00e9\U0001F600"}, G: Term{Kind: Blank, Value: "g.x"}}},
		{`_:a.b <http://a/p> _:c.`, Quad{S: Term{Kind: Blank, Value: "a.b"}, P: iri("http://a/p"), O: Term{Kind: Blank, Value: "c"}}},
	}
	for _, c := range cases {
		got, err := ParseQuad(c.line)
		if err != nil {
			t.Errorf("ParseQuad(%q): %v", c.line, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseQuad(%q) = %+v, want %+v", c.line, got, c.want)
		}
		again, err := ParseQuad(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("canonical %q does not read back: %+v %v", got.String(), again, err)
		}
	}
}

func TestParseQuad_RefusesWithColumn(t *testing.T) {
	cases := []struct{ line, want string }{
		{`<http://a/s> <http://a/p> <http://a/o>`, "expected \".\""},
		{`"lit" <http://a/p> <http://a/o> .`, "subject cannot be a literal"},
		{`<http://a/s> _:p <http://a/o> .`, "predicate cannot be a blank node"},
		{`<http://a/s> <http://a/p> "x" "y" .`, "graph label cannot be a literal"},
		{`<http://a/s> <http://a/p> "open .`, "literal not closed"},
		{`<http://a/s <http://a/p> <http://a/o> .`, "not allowed in an IRI"},
		{`<http://a/s> <http://a/p> "x"@ .`, "bad language tag"},
		{`<http://a/s> <http://a/p> "x\q" .`, "unknown escape"},
		{`<http://a/s> <http://a/p> "x\uD800" .`, "bad \\u escape"},
		{`<http://a/s> <http://a/p> <http://a/o> . trailing`, "unexpected text"},
		{`<> <http://a/p> <http://a/o> .`, "empty IRI"},
		{"<http://a/s> <http://a/p> \"\xff\" .", "invalid UTF-8"},
	}
	for _, c := range cases {
		_, err := ParseQuad(c.line)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.want) || se.Column < 1 {
			t.Errorf("ParseQuad(%q) = %v, want a syntax error with %q and a column", c.line, err, c.want)
		}
	}
	for _, blank := range []string{"", "   ", "# only a comment", "\t# x"} {
		if _, err := ParseQuad(blank); !errors.Is(err, ErrNoStatement) {
			t.Errorf("ParseQuad(%q) = %v, want ErrNoStatement", blank, err)
		}
	}
}

// The seed's own example (retyped from the Timbuctoo documentation in
// shared/seeds), with its unified-diff header lines.
func TestReadPatch_SeedExample(t *testing.T) {
	f, err := os.Open("testdata/seed_example.nqud")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	err = ReadPatch(f, func(c Change) error {
		sign := "+"
		if c.Op == Retract {
			sign = "-"
		}
		got = append(got, fmt.Sprintf("%d%s%s", c.Line, sign, c.Quad.O))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`4+"The Netherland"`, `5-"The Netherlands"`, `6+"436052"^^<http://schema.org/longitude>`,
		`7+<http://timbuctoo.huygens.knaw.nl/datasets/clusius/Places>`, `8+"5200951"^^<http://schema.org/latitude>`, `9+"PL00000029"`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func TestReadPatch_LinesAndErrors(t *testing.T) {
	patch := strings.Join([]string{
		"--- a.nq 2017-08-18",
		"+++ b.nq 2017-07-19",
		"@@ -1,2 +1,2 @@",
		" <http://a/s> <http://a/p> <http://a/context> .",
		"",
		"+<http://a/s> <http://a/p> \"new\" .",
		"-<http://a/s> <http://a/p> \"old\" .",
		"++<http://a/s> <http://a/p> <http://a/o> .",
	}, "\n")
	var ops []Op
	err := ReadPatch(strings.NewReader(patch), func(c Change) error { ops = append(ops, c.Op); return nil })
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 8 || se.Column != 2 {
		t.Fatalf("a '++' line: %v, want a syntax error at line 8 column 2 (the quad after the sign)", err)
	}
	if !reflect.DeepEqual(ops, []Op{Add, Retract}) {
		t.Fatalf("ops before the bad line %v", ops)
	}
	for _, bad := range []string{"+", "-   ", "+# comment"} {
		err := ReadPatch(strings.NewReader("ok\n"+bad), func(Change) error { return nil })
		if !errors.As(err, &se) || se.Line != 2 {
			t.Errorf("patch line %q: %v, want a syntax error at line 2", bad, err)
		}
	}
}

func TestStore_ApplyIdempotentAndExportSorted(t *testing.T) {
	var s Store
	patch := "+<http://a/b> <http://a/p> \"1\" .\n+<http://a/a> <http://a/p> \"2\" .\n-<http://a/z> <http://a/p> \"gone\" .\n"
	for range 2 {
		if n, err := s.ApplyPatch(strings.NewReader(patch)); err != nil || n != 3 {
			t.Fatalf("apply: %d %v", n, err)
		}
	}
	var b strings.Builder
	if err := s.Export(&b); err != nil {
		t.Fatal(err)
	}
	want := "<http://a/a> <http://a/p> \"2\" .\n<http://a/b> <http://a/p> \"1\" .\n"
	if b.String() != want {
		t.Fatalf("export %q, want %q", b.String(), want)
	}
}

// TestDiff_ApplyingItGivesTheTarget is the property the example Source
// relies on: the patch Diff makes, applied to from, gives to.
func TestDiff_ApplyingItGivesTheTarget(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	random := func() *Store {
		var s Store
		for range rng.IntN(30) {
			s.Add(Quad{S: iri(fmt.Sprintf("http://a/%d", rng.IntN(8))), P: iri("http://a/p"), O: Term{Kind: Literal, Value: fmt.Sprint(rng.IntN(5))}})
		}
		return &s
	}
	for range 500 {
		from, to := random(), random()
		var got Store
		for _, l := range from.Lines() {
			q, _ := ParseQuad(l)
			got.Add(q)
		}
		if _, err := got.ApplyPatch(strings.NewReader(Diff(from, to))); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Lines(), to.Lines()) {
			t.Fatalf("diff applied: %v, want %v", got.Lines(), to.Lines())
		}
	}
}

// FuzzReadPatch: any input is read without panicking, every error names
// a line, and every quad read writes back to a line that reads the same.
func FuzzReadPatch(f *testing.F) {
	if b, err := os.ReadFile("testdata/seed_example.nqud"); err == nil {
		f.Add(string(b))
	}
	f.Add("+<http://a/s> <http://a/p> \"a\\u0000b\"@en .\n-_:x <http://a/p> _:y <http://a/g> .\n")
	f.Add("--- a\n+++ b\n@@ -0,0 +1 @@\n+<http://a/\\U0001F600> <http://a/p> \"\\\"\" .\n")
	f.Fuzz(func(t *testing.T, patch string) {
		err := ReadPatch(strings.NewReader(patch), func(c Change) error {
			again, err := ParseQuad(c.Quad.String())
			if err != nil {
				t.Fatalf("canonical line %q of %+v does not read back: %v", c.Quad.String(), c.Quad, err)
			}
			if again.String() != c.Quad.String() {
				t.Fatalf("canonical form not stable: %q then %q", c.Quad.String(), again.String())
			}
			return nil
		})
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1) && !strings.Contains(err.Error(), "token too long") {
			t.Fatalf("error without a line: %v", err)
		}
	})
}
