package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MediaTypePatch is the media type of an N-Quads Unified Diff patch
// (extension .nqud), as Timbuctoo defines it.
const MediaTypePatch = "application/vnd.timbuctoo-rdf.nquads_unified_diff"

// Op is what a patch line does to its quad.
type Op uint8

// Patch operations.
const (
	Add Op = iota + 1
	Retract
)

// Change is one line of a patch that adds or retracts a quad.
type Change struct {
	Op   Op
	Quad Quad
	Line int // where in the patch, 1-based
}

// ReadPatch calls fn for every change of an N-Quads Unified Diff: a line
// that starts with a single "+" adds the quad after it, one that starts
// with a single "-" retracts it, and every other line ("--- a", "+++ b",
// "@@ … @@", context, blank) is ignored, as the format says. A "+" or "-"
// line that is not one N-Quads statement is an error naming the line. A
// byte order mark at the start and CRLF line ends are accepted.
func ReadPatch(r io.Reader, fn func(Change) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for n := 1; sc.Scan(); n++ {
		line := cleanLine(sc.Text(), n)
		op, rest, ok := patchLine(line)
		if !ok {
			continue
		}
		q, err := ParseQuad(rest)
		if errors.Is(err, ErrNoStatement) {
			return &SyntaxError{Line: n, Column: 2, Msg: "a " + line[:1] + " line without a statement"}
		}
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return &SyntaxError{Line: n, Column: se.Column + 1, Msg: se.Msg}
			}
			return fmt.Errorf("dataset: patch line %d: %w", n, err)
		}
		if err := fn(Change{Op: op, Quad: q, Line: n}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("dataset: reading patch: %w", err)
	}
	return nil
}

// cleanLine drops what a text editor or another platform may add around
// a line: a UTF-8 byte order mark at the start of the first line (which
// would otherwise hide its "+" or "-") and the CR of a CRLF line end.
func cleanLine(line string, n int) string {
	if n == 1 {
		line = strings.TrimPrefix(line, "\ufeff")
	}
	return strings.TrimSuffix(line, "\r")
}

// patchLine tells whether line adds or retracts, and the statement after
// the sign. "+++" and "---" (file headers) are not changes.
func patchLine(line string) (Op, string, bool) {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		return 0, "", false
	case strings.HasPrefix(line, "+"):
		return Add, line[1:], true
	case strings.HasPrefix(line, "-"):
		return Retract, line[1:], true
	}
	return 0, "", false
}
