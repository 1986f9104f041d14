package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every module go.mod requires directly has its line in DEPENDENCIES.md
// (what it does for us, why it beats writing it), and the document names
// no module go.mod does not require directly.
func TestDependencies_EveryDirectModuleExplained(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root(t), "DEPENDENCIES.md"))
	if err != nil {
		t.Fatal(err)
	}
	direct := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\t(\S+) v\S+\s*$`).FindAllSubmatch(mod, -1) {
		direct[string(m[1])] = true
	}
	if len(direct) == 0 {
		t.Fatal("go.mod: no direct requirement found")
	}
	named := map[string]bool{}
	for _, row := range strings.Split(string(doc), "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 4 || !strings.Contains(cells[1], "`") {
			continue
		}
		if strings.TrimSpace(cells[2]) == "" || strings.TrimSpace(cells[3]) == "" {
			t.Errorf("DEPENDENCIES.md: row %q lacks what it does or why", strings.TrimSpace(cells[1]))
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			named[m[1]] = true
		}
	}
	for m := range direct {
		if !named[m] {
			t.Errorf("DEPENDENCIES.md has no row for %s, a direct dependency in go.mod", m)
		}
	}
	for m := range named {
		if !direct[m] {
			t.Errorf("DEPENDENCIES.md names %s, which go.mod does not require directly", m)
		}
	}
}
