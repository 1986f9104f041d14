package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// POST /admin/channels takes a dataset description (describedBy), stores
// it, and shows it back; one that is not an absolute http(s) URL within
// the hub's limit is refused with 400 naming the field.
func TestAdmin_ChannelDescribedBy(t *testing.T) {
	f := newFixture(t)
	const desc = "http://example.com/dataset1/description.xml"
	status, body := f.adminDo(http.MethodPost, "/admin/channels", `{"name":"ds","hosted":true,"trust":"open","describedBy":"`+desc+`"}`)
	if status != http.StatusCreated {
		t.Fatalf("POST: %d %s", status, body)
	}
	status, body = f.adminDo(http.MethodGet, "/admin/channels/ds", "")
	var got struct {
		DescribedBy string `json:"describedBy"`
	}
	if err := json.Unmarshal([]byte(body), &got); status != 200 || err != nil || got.DescribedBy != desc {
		t.Fatalf("GET: %d %s (%v)", status, body, err)
	}
	for _, bad := range []string{"relative/description.xml", "ftp://example.com/d", "http://example.com/" + strings.Repeat("d", 9000)} {
		status, body := f.adminDo(http.MethodPost, "/admin/channels", `{"name":"bad","hosted":true,"trust":"open","describedBy":"`+bad+`"}`)
		if status != 400 || !strings.Contains(body, "describedBy") {
			t.Errorf("describedBy %.40q: %d %s, want 400 naming describedBy", bad, status, body)
		}
	}
}
