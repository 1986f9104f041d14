package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One writer and one follower of the log: only hub/logcache waits on the
// log's change signal (Changed), and only the hub's intake (hub/intake.go)
// appends to it (Append, AppendAfter); hub/jslog, the log itself, does
// both. A method that passes a call to the method of the same name of the
// log it wraps (a hub.Log decorator such as logcache.Cache) neither
// follows nor writes. The check reads the syntax of every non-test file: a
// call named Changed without arguments, AppendAfter, or Append with two
// arguments (a hub.Log's shape) counts.

// logCall is a call to the log's Changed, Append or AppendAfter.
type logCall struct {
	pos    token.Position
	method string
}

// logCalls returns the log calls of a parsed file that are not a
// decorator's forwarding.
func logCalls(fset *token.FileSet, f *ast.File) []logCall {
	var out []logCall
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			name := sel.Sel.Name
			logShaped := (name == "Changed" && len(c.Args) == 0) || name == "AppendAfter" || (name == "Append" && len(c.Args) == 2)
			forwards := fn.Recv != nil && fn.Name.Name == name
			if logShaped && !forwards {
				out = append(out, logCall{fset.Position(c.Pos()), name})
			}
			return true
		})
	}
	return out
}

// allowedLogCall reports whether the module-relative file rel may make
// the call.
func allowedLogCall(rel, method string) bool {
	dir := filepath.ToSlash(filepath.Dir(rel))
	if dir == "hub/jslog" {
		return true
	}
	if method == "Changed" {
		return dir == "hub/logcache"
	}
	return filepath.ToSlash(rel) == "hub/intake.go"
}

// logViolations parses src as the file rel and returns what breaks the rule.
func logViolations(t *testing.T, rel string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range logCalls(fset, f) {
		if !allowedLogCall(rel, c.method) {
			out = append(out, c.pos.String()+": "+c.method)
		}
	}
	return out
}

func TestHouse_OneWriterAndOneFollowerOfTheLog(t *testing.T) {
	dir := root(t)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != dir && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range logViolations(t, rel, src) {
			if strings.HasSuffix(v, "Changed") {
				t.Errorf("%s: only hub/logcache follows the log: use a logcache.Subscription (or logcache.Await), not the log's change signal", v)
			} else {
				t.Errorf("%s: only the hub's intake appends to the log: publish through a hub port (PublishFollowed, PublishFramework)", v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The rule's check catches the class: a follower or a writer outside its
// home, but not the home itself nor a decorator forwarding to the log.
func TestHouse_LogRuleCatchesFollowersAndWriters(t *testing.T) {
	for _, tc := range []struct {
		name, rel, src string
		bad            bool
	}{
		{"FollowerInDelivery", "delivery/x.go", `package delivery
func (w *W) loop() { for { <-w.log.Changed() } }`, true},
		{"FollowerInAFunction", "live/x.go", `package live
func wait(l Log) { ch := l.Changed(); <-ch }`, true},
		{"WriterInPull", "hub/pull/x.go", `package pull
func (p *Pull) emit() { p.log.Append(ctx, rec) }`, true},
		{"ConditionalWriterInHubOutsideIntake", "hub/x.go", `package hub
func (h *Hub) f() { h.cfg.Log.(ConditionalLog).AppendAfter(ctx, rec, 1) }`, true},
		{"FollowerInHubOutsideLogcache", "hub/x.go", `package hub
func (h *Hub) f() { <-h.cfg.Log.Changed() }`, true},
		{"Intake", "hub/intake.go", `package hub
func (h *Hub) append() { h.cfg.Log.Append(ctx, rec); h.cfg.Log.(ConditionalLog).AppendAfter(ctx, rec, 1) }`, false},
		{"TheCache", "hub/logcache/x.go", `package logcache
func (c *Cache) Run() { <-c.log.Changed() }`, false},
		{"TheLog", "hub/jslog/x.go", `package jslog
func (l *Log) f() { <-l.conn.Changed() }`, false},
		{"Decorator", "internal/faultlog/x.go", `package faultlog
func (l *Log) Append(ctx context.Context, rec wire.Record) (uint64, bool, error) { return l.Log.Append(ctx, rec) }
func (l *Log) Changed() <-chan struct{} { return l.Log.Changed() }`, false},
		{"OtherAppends", "wire/x.go", `package wire
func f() { c.Append(buf); slices.Append(a, b, c) }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := logViolations(t, tc.rel, tc.src)
			if (len(got) > 0) != tc.bad {
				t.Fatalf("violations %q; want some: %v", got, tc.bad)
			}
		})
	}
}

// The two delivery engines share the log through hub/logcache, not each
// other: live sessions know nothing of webhooks, nor webhooks of sessions.
func TestHouse_LiveAndWebhooksStayApart(t *testing.T) {
	all := packages(t)
	for _, pair := range [][2]string{{"live", "delivery"}, {"delivery", "live"}} {
		p, ok := all[pair[0]]
		if !ok {
			t.Fatalf("no package %s", pair[0])
		}
		for _, imp := range p.Imports {
			if dep, _ := ours(imp); dep == pair[1] {
				t.Errorf("%s imports %s: the engines share what they need through hub/logcache", pair[0], pair[1])
			}
		}
	}
}
