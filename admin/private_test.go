package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/rshub/rshub/access/accesstest"
	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
)

// POST /admin/channels takes "private" on a hub with a subscriber key,
// shows it back and keeps it when the channel is saved again; both answers
// keep to the contract.
func TestAdmin_ChannelPrivate(t *testing.T) {
	v := accesstest.NewSecret(t).Verifier(t)
	f := newFixture(t, func(c *hub.Config, _ *admin.Config) { c.Subscribers = v })
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

// A private channel on a hub without a subscriber key is a 400 naming
// --subscriber-jwt-key: no one could ever read it.
func TestAdmin_PrivateChannelWithoutSubscriberKeyRefused(t *testing.T) {
	f := newFixture(t)
	status, body := f.adminDo(http.MethodPost, "/admin/channels", `{"name":"secret","hosted":true,"trust":"open","private":true}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "--subscriber-jwt-key") {
		t.Fatalf("a private channel without a subscriber key: %d %q, want 400 naming --subscriber-jwt-key", status, body)
	}
}
