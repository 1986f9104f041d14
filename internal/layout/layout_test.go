package layout

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rshub/rshub"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath string
	Dir        string
	Imports    []string
	Standard   bool
}

// bench is the benchmark's directory, a module of its own.
const bench = "cmd/rshub-bench"

// packages lists the module's packages with their direct imports (test
// files excluded: a test may use whatever helps it).
func packages(t *testing.T) map[string]pkg {
	return list(t, ".")
}

// list lists the packages of the module in dir (relative to the
// repository), keyed by their path relative to the main module.
func list(t *testing.T, dir string) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join(root(t), dir)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	all := map[string]pkg{}
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		all[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = p
	}
	return all
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// ours returns the module-relative path of an import, and whether it is
// one of the module's packages.
func ours(imp string) (string, bool) {
	if imp == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(imp, module+"/")
	return rel, ok
}

func under(rel string, prefixes ...string) bool {
	for _, p := range prefixes {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// std reports whether an import path belongs to the standard library
// (no dot in its first element).
func std(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func TestHouse_WireImportsOnlyTheStandardLibrary(t *testing.T) {
	p, ok := packages(t)["wire"]
	if !ok {
		t.Fatal("no package wire")
	}
	for _, imp := range p.Imports {
		if !std(imp) {
			t.Errorf("wire imports %s: the protocol package takes only the standard library", imp)
		}
	}
}

func TestHouse_ChangefeedDoesNoIO(t *testing.T) {
	p, ok := packages(t)["changefeed"]
	if !ok {
		t.Fatal("no package changefeed")
	}
	// net/netip and net/url only parse strings; every other net package dials
	parsers := map[string]bool{"net/netip": true, "net/url": true}
	forbidden := regexp.MustCompile(`^(os|os/.*|net|net/.*|syscall|io/fs|io/ioutil|path/filepath|log|log/.*|database/.*|plugin|crypto/rand|math/rand|math/rand/v2)$`)
	for _, imp := range p.Imports {
		if _, mine := ours(imp); mine || !std(imp) {
			t.Errorf("changefeed imports %s: the document model depends on nothing", imp)
		}
		if forbidden.MatchString(imp) && !parsers[imp] {
			t.Errorf("changefeed imports %s: the document model does no I/O beyond io.Reader and io.Writer", imp)
		}
	}
}

func TestHouse_ClientsAndServerStayApart(t *testing.T) {
	server := []string{"hub", "delivery", "admin", "server", "dashboard", "internal", "cmd/hub", bench}
	all := packages(t)
	maps.Copy(all, list(t, bench))
	for rel, p := range all {
		for _, imp := range p.Imports {
			dep, mine := ours(imp)
			if !mine {
				continue
			}
			switch {
			case under(rel, "client") && !under(dep, "client", "wire", "changefeed"):
				t.Errorf("%s imports %s: clients import only wire, changefeed and each other", rel, dep)
			case under(rel, server...) && under(dep, "client"):
				t.Errorf("%s imports %s: the server never imports client packages", rel, dep)
			case under(rel, "examples") && under(dep, "internal"):
				t.Errorf("%s imports %s: an example must be copyable, so it imports no internal package", rel, dep)
			}
		}
	}
}

// The benchmark is a module of its own (replacing rshub with ../..): the
// main module neither holds nor imports it, and the one test command
// vets, staticchecks and tests it beside the main module.
func TestHouse_BenchIsAModuleOfItsOwn(t *testing.T) {
	for rel, p := range packages(t) {
		if under(rel, bench) {
			t.Errorf("the main module holds %s: the bench has its own go.mod", rel)
		}
		for _, imp := range p.Imports {
			if dep, mine := ours(imp); mine && under(dep, bench) {
				t.Errorf("%s imports %s: the main module does not depend on the bench", rel, imp)
			}
		}
	}
	if len(list(t, bench)) == 0 {
		t.Errorf("go list in %s finds no package", bench)
	}
	mod, err := os.ReadFile(filepath.Join(root(t), bench, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"module " + module + "/" + bench + "\n", "replace " + module + " => ../..\n"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("%s/go.mod lacks %q", bench, want)
		}
	}
	script, err := os.ReadFile(filepath.Join(root(t), "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^modules=\(([^)]*)\)$`).FindStringSubmatch(string(script))
	if m == nil || !slices.Contains(strings.Fields(m[1]), ".") || !slices.Contains(strings.Fields(m[1]), bench) {
		t.Fatalf("scripts/test.sh has no modules=(. %s) list", bench)
	}
	for _, step := range []string{"go vet ./...", "staticcheck ./...", "go test -race"} {
		if !regexp.MustCompile(`for m in "\$\{modules\[@\]\}"; do[^\n]*\n?[^\n]*` + regexp.QuoteMeta(step)).MatchString(string(script)) {
			t.Errorf("scripts/test.sh does not run %q in every module", step)
		}
	}
}

// TestHouse_READMEPackageTableMatchesTheTree: every path the package table
// of docs/ARCHITECTURE.md names exists, and every package of the module is covered
// by a row (itself, or a directory row ending in "/"); every internal
// package is named in the internal row.
func TestHouse_READMEPackageTableMatchesTheTree(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "| package | what it owns |")
	if start < 0 {
		t.Fatal("docs/ARCHITECTURE.md has no package table")
	}
	var rows [][2]string
	for _, line := range strings.Split(text[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		rows = append(rows, [2]string{cells[1], strings.Join(cells[2:], "|")})
	}
	tick := regexp.MustCompile("`([^`]+)`")
	var listed []string
	internalRow := ""
	for _, r := range rows {
		for _, m := range tick.FindAllStringSubmatch(r[0], -1) {
			path := m[1]
			if _, err := os.Stat(filepath.Join(root(t), path)); err != nil {
				t.Errorf("the package table names %s, which is not in the tree", path)
			}
			listed = append(listed, strings.TrimSuffix(path, "/"))
			if path == "internal/" {
				internalRow = r[1]
			}
		}
	}
	for rel := range packages(t) {
		if rel == "" {
			continue
		}
		if !under(rel, listed...) {
			t.Errorf("package %s is in no row of the package table (docs/ARCHITECTURE.md)", rel)
		}
		if name, ok := strings.CutPrefix(rel, "internal/"); ok && !strings.Contains(internalRow, "`"+name+"`") {
			t.Errorf("internal package %s is not named in the package table's internal row (docs/ARCHITECTURE.md)", name)
		}
	}
}
