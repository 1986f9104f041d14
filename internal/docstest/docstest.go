// Package docstest lets a command's tests check that a page of docs/
// quotes the command's output as it is today, so reference pages that are
// generated cannot rot unnoticed.
package docstest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// block returns the body of the first fenced code block after the line
// heading in the file docs/<page> of the repository.
func block(t testing.TB, page, heading string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "..", "..", "docs", page)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("docs/%s has no heading %q", page, heading)
	}
	rest := text[i+len(heading)+2:]
	open := strings.Index(rest, "```")
	if open < 0 {
		t.Fatalf("docs/%s: no code block after %q", page, heading)
	}
	body := rest[open:]
	body = body[strings.Index(body, "\n")+1:]
	end := strings.Index(body, "```")
	if end < 0 {
		t.Fatalf("docs/%s: unterminated code block after %q", page, heading)
	}
	return body[:end]
}

// Same fails the test, naming the first line that differs, when the block
// under heading in docs/<page> is not want; regenerate names the command
// that writes the page.
func Same(t testing.TB, page, heading, want, regenerate string) {
	t.Helper()
	got := block(t, page, heading)
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("docs/%s (%s) is out of date at line %d:\n  page: %q\n  now:  %q\nrun %s", page, heading, i+1, gl, wl, regenerate)
		}
	}
}
