package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Two runs of the test command side by side write no file in common: its
// log is $RSHUB_TEST_LOG or a file of a directory the run made (mktemp -d),
// never a fixed path under /tmp.
func TestTestScript_RunsShareNoFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	if !strings.Contains(script, `log="${RSHUB_TEST_LOG:-$(mktemp -d `) || !strings.Contains(script, `tee -a "$log"`) {
		t.Error(`scripts/test.sh: want log="${RSHUB_TEST_LOG:-$(mktemp -d …)/…}" and the tests' output through tee -a "$log"`)
	}
	if m := regexp.MustCompile(`/tmp/[\w.-]+`).FindString(script); m != "" {
		t.Errorf("scripts/test.sh writes %s, a path every run shares", m)
	}
}
