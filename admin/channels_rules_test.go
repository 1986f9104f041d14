package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/edgetest"
)

// POST /admin/channels refuses every hostile channel definition with 400
// and the reason (issue 23 items 4, 5 and 9), and stores none of them.
func TestPutChannel_HostileDefinitionsRefused(t *testing.T) {
	f := newFixture(t)
	for _, c := range edgetest.Channels() {
		if status, body := f.adminDo(http.MethodPost, "/admin/channels", string(c.JSON())); status != http.StatusBadRequest {
			t.Errorf("%s: %d %.200s, want 400", c.Why, status, body)
		}
	}
	if chs, err := f.Store.Channels(context.Background()); err != nil || len(chs) != 0 {
		t.Fatalf("store holds %d channels (%v), want none", len(chs), err)
	}
}

// A hub whose channels are another's (an edge hub's are its origin's)
// refuses to create, change or delete one, or to reset its continuity,
// with 409 and the reason, and changes nothing; it still lists and shows
// them.
func TestChannels_ReadOnlyRefusesWrites(t *testing.T) {
	const why = "this is an edge hub: its channels are its origin's"
	f := newFixture(t, func(_ *hub.Config, a *admin.Config) { a.ChannelsReadOnly = why })
	ch := f.Channel(hub.Channel{Topic: "http://127.0.0.1:1/t", Trust: hub.TrustOpen})
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPost, "/admin/channels", `{"name":"new","hosted":true,"trust":"open"}`},
		{http.MethodPost, "/admin/channels", `{"name":"` + ch.Name + `","topic":"` + ch.Topic + `","trust":"token","token":"x"}`},
		{http.MethodDelete, "/admin/channels/" + ch.Name, ""},
		{http.MethodPost, "/admin/channels/" + ch.Name + "/continuity/reset", ""},
	} {
		if status, body := f.adminDo(req.method, req.path, req.body); status != http.StatusConflict || !strings.Contains(body, why) {
			t.Errorf("%s %s: %d %.200s, want 409 with the reason", req.method, req.path, status, body)
		}
	}
	chs, err := f.Store.Channels(context.Background())
	if err != nil || len(chs) != 1 || chs[0].Trust != hub.TrustOpen {
		t.Fatalf("store holds %+v (%v), want the one channel unchanged", chs, err)
	}
	if status, body := f.adminDo(http.MethodGet, "/admin/channels/"+ch.Name, ""); status != 200 {
		t.Fatalf("GET of a channel: %d %.200s", status, body)
	}
}
