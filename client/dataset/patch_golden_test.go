package dataset

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/patch")

// TestReadPatch_Golden reads every testdata/patch/*.nqud and compares what
// ReadPatch makes of it (each change with its line, or the error) with
// the .golden file beside it. Files named err_* must fail, naming the line.
func TestReadPatch_Golden(t *testing.T) {
	files, err := filepath.Glob("testdata/patch/*.nqud")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".nqud")
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var b strings.Builder
			err = ReadPatch(f, func(c Change) error {
				sign := "+"
				if c.Op == Retract {
					sign = "-"
				}
				fmt.Fprintf(&b, "%d %s %s\n", c.Line, sign, c.Quad)
				return nil
			})
			if err != nil {
				fmt.Fprintf(&b, "error: %v\n", err)
			}
			if strings.HasPrefix(name, "err_") != (err != nil) {
				t.Errorf("error %v for %s", err, name)
			}
			if err != nil && !strings.Contains(err.Error(), "line ") {
				t.Errorf("the error does not name the line: %v", err)
			}
			golden := strings.TrimSuffix(in, ".nqud") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run Golden -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("got\n%s\nwant\n%s", b.String(), want)
			}
		})
	}
}
