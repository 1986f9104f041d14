package admin_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// POST /admin/channels takes "private", shows it back and keeps it when the
// channel is saved again; both answers keep to the contract.
func TestAdmin_ChannelPrivate(t *testing.T) {
	f := newFixture(t)
	c := loadContract(t, f)
	c.admin(t, http.MethodPost, f.Server.URL+"/admin/channels", `{"name":"secret","hosted":true,"trust":"open","private":true}`, http.StatusCreated)
	body := c.admin(t, http.MethodGet, f.Server.URL+"/admin/channels/secret", "", http.StatusOK)
	var got struct {
		Private bool `json:"private"`
	}
	if err := json.Unmarshal(body, &got); err != nil || !got.Private {
		t.Fatalf("GET: %s (%v), want private", body, err)
	}
	c.admin(t, http.MethodPost, f.Server.URL+"/admin/channels", `{"name":"secret","hosted":true,"trust":"open","private":"yes"}`, http.StatusBadRequest)
}
