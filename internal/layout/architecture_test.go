package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// architecture returns docs/ARCHITECTURE.md without its fenced blocks.
func architecture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	return fenced.ReplaceAllString(string(b), "")
}

var fenced = regexp.MustCompile("(?s)```.*?```")

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	// a directory and the files of it a line names: `dir/` (`a.go`, `b.go`)
	dirFiles = regexp.MustCompile("`([\\w./-]+/)` \\(([^)]*)\\)")
)

// Every path docs/ARCHITECTURE.md names exists: each file or directory in
// backticks (not URL paths or module paths), and each file named after its
// directory as `dir/` (`a.go`, …).
func TestArchitecture_EveryPathNamedExists(t *testing.T) {
	doc, r := architecture(t), root(t)
	exists := func(p string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(r, filepath.FromSlash(strings.TrimSuffix(p, "/")))); err != nil {
			t.Errorf("docs/ARCHITECTURE.md names %s, which does not exist", p)
		}
	}
	checked := 0
	for _, m := range backticked.FindAllStringSubmatch(doc, -1) {
		p := m[1]
		if !strings.Contains(p, "/") || strings.HasPrefix(p, "/") || strings.ContainsAny(p, " <>:*") || strings.HasPrefix(p, "github.com") {
			continue
		}
		exists(p)
		checked++
	}
	for _, m := range dirFiles.FindAllStringSubmatch(doc, -1) {
		for _, f := range backticked.FindAllStringSubmatch(m[2], -1) {
			if strings.HasSuffix(f[1], ".go") && !strings.Contains(f[1], "/") {
				exists(m[1] + f[1])
				checked++
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d paths found in docs/ARCHITECTURE.md: the check no longer reads it", checked)
	}
}

// The lock order of docs/ARCHITECTURE.md names every lock of every type of
// the hub's packages that has more than one (pkg.Type.field), so that none
// is held across another unseen; and every lock it names is a mutex field
// of that type.
func TestArchitecture_LockOrderNamesEveryLockOfATypeWithMany(t *testing.T) {
	doc := architecture(t)
	start := strings.Index(doc, "\n## Lock order\n")
	if start < 0 {
		t.Fatal("docs/ARCHITECTURE.md has no ## Lock order")
	}
	section := doc[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	locks := mutexFields(t, root(t)) // pkg.Type → fields
	named := map[string]bool{}
	for _, m := range backticked.FindAllStringSubmatch(section, -1) {
		if parts := strings.Split(m[1], "."); len(parts) == 3 && !strings.ContainsAny(m[1], " ()") {
			named[m[1]] = true
			fields, ok := locks[parts[0]+"."+parts[1]]
			if !ok || !strings.Contains(" "+strings.Join(fields, " ")+" ", " "+parts[2]+" ") {
				t.Errorf("the lock order names %s, which is not a mutex field of that type", m[1])
			}
		}
	}
	for typ, fields := range locks {
		if len(fields) < 2 {
			continue
		}
		for _, f := range fields {
			if !named[typ+"."+f] {
				t.Errorf("%s has %d locks, but the lock order does not name %s.%s", typ, len(fields), typ, f)
			}
		}
	}
}

// mutexFields returns the sync.Mutex and sync.RWMutex fields of every
// struct type in the non-test files of the hub's packages (not examples/,
// tools/ or the benchmark's module), by "pkg.Type".
func mutexFields(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch filepath.ToSlash(rel) {
			case "examples", "tools", "cmd/rshub-bench", "integration":
				return filepath.SkipDir
			}
			if d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				se, ok := fl.Type.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				if x, ok := se.X.(*ast.Ident); !ok || x.Name != "sync" || (se.Sel.Name != "Mutex" && se.Sel.Name != "RWMutex") {
					continue
				}
				for _, nm := range fl.Names {
					key := f.Name.Name + "." + ts.Name.Name
					out[key] = append(out[key], nm.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
