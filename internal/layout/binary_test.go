package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The hub as `make build` builds it does not link html/template or
// text/template: templates call methods by reflection, so a binary that
// holds them keeps every exported method of every type stored in an
// interface (the hub was 55 MB with them, 28 MB without).
func TestBinary_HubLinksNoTemplates(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RELEASE_TAGS = (\S+)$`).FindSubmatch(mk)
	if m == nil || !regexp.MustCompile(`(?m)^\tgo build -trimpath -tags \$\(RELEASE_TAGS\) -ldflags='-s -w' -o bin/ ./cmd/hub ./cmd/subscriber$`).Match(mk) {
		t.Fatal("Makefile: want RELEASE_TAGS = … and build: go build -trimpath -tags $(RELEASE_TAGS) -ldflags='-s -w' -o bin/ ./cmd/hub ./cmd/subscriber")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(gobin, "list", "-tags", string(m[1]), "-deps", "./cmd/hub")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"html/template", "text/template", "golang.org/x/net/trace"} {
		if slices.Contains(deps, banned) {
			t.Errorf("the hub built with -tags %s links %s", m[1], banned)
		}
	}
}
