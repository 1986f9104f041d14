package hub

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// refusalsDoc is the table docs/usage.md quotes under "Refusals".
func refusalsDoc() string {
	var b strings.Builder
	b.WriteString("| reason | status | means |\n|---|---|---|\n")
	for _, r := range refusalTable() {
		fmt.Fprintf(&b, "| `%s` | `%d` | %s |\n", r.Reason, r.Status, r.Means)
	}
	return b.String()
}

func TestRefusalTable_OneStatusPerReasonAndQuotedInTheDocs(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range refusalTable() {
		if seen[r.Reason] {
			t.Errorf("reason %q twice in the table", r.Reason)
		}
		seen[r.Reason] = true
		if r.Status < 400 || r.Status > 599 || r.Means == "" {
			t.Errorf("row %+v: want a 4xx or 5xx status and a meaning", r)
		}
		if got := refuse(r.Reason, "x"); got.Status != r.Status || got.Code != string(r.Reason) {
			t.Errorf("refuse(%q) = %+v, want status %d", r.Reason, got, r.Status)
		}
	}
	if got := Reason("not in the table").status(); got != 500 {
		t.Errorf("a reason missing from the table answers %d, want 500", got)
	}
	page, err := os.ReadFile("../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := refusalsDoc(); !strings.Contains(string(page), want) {
		t.Errorf("docs/usage.md does not quote the refusal table as it is; paste under \"Refusals\":\n%s", want)
	}
}
