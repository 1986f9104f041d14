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

// POST /admin/channels creates and never replaces: a second POST of a
// channel's name (a new token, say) or of its topic under another name is
// a 409 naming the channel and PUT, and leaves the channel as it was; PUT
// /admin/channels/{name} replaces it (200), or creates it (201).
func TestChannels_CreateExistingIsConflictPutReplaces(t *testing.T) {
	f := newFixture(t)
	first := `{"name": "notes", "topic": "http://127.0.0.1:1/notes", "trust": "token", "token": "first-token-of-16-chars"}`
	if status, body := f.adminDo(http.MethodPost, "/admin/channels", first); status != http.StatusCreated {
		t.Fatalf("POST a new channel: %d %s", status, body)
	}
	for _, again := range []string{
		`{"name": "notes", "topic": "http://127.0.0.1:1/notes", "trust": "token", "token": "second-token-of-16-chars"}`,
		`{"name": "renamed", "topic": "http://127.0.0.1:1/notes", "trust": "token", "token": "second-token-of-16-chars"}`,
	} {
		status, body := f.adminDo(http.MethodPost, "/admin/channels", again)
		if status != http.StatusConflict || !strings.Contains(body, `"notes"`) || !strings.Contains(body, "PUT /admin/channels/notes") {
			t.Errorf("POST %s over an existing channel: %d %q, want 409 naming channel \"notes\" and PUT /admin/channels/notes", again, status, body)
		}
	}
	ctx := context.Background()
	if ch, err := f.Hub.ChannelByName(ctx, "notes"); err != nil || ch.Token != "first-token-of-16-chars" {
		t.Fatalf("after the refused POSTs the channel is %+v (%v), want the first token kept", ch, err)
	}
	if _, err := f.Hub.ChannelByName(ctx, "renamed"); err == nil {
		t.Fatal("a refused POST created channel \"renamed\"")
	}

	status, body := f.adminDo(http.MethodPut, "/admin/channels/notes", `{"topic": "http://127.0.0.1:1/notes", "trust": "token", "token": "second-token-of-16-chars"}`)
	if status != http.StatusOK {
		t.Fatalf("PUT over the channel: %d %s, want 200", status, body)
	}
	if ch, err := f.Hub.ChannelByName(ctx, "notes"); err != nil || ch.Token != "second-token-of-16-chars" {
		t.Fatalf("after PUT the channel is %+v (%v), want the second token", ch, err)
	}
	if status, body := f.adminDo(http.MethodPut, "/admin/channels/fresh", `{"hosted": true, "trust": "open"}`); status != http.StatusCreated || !strings.Contains(body, `"fresh"`) {
		t.Fatalf("PUT a new channel: %d %s, want 201", status, body)
	}
	if status, body := f.adminDo(http.MethodPut, "/admin/channels/fresh", `{"name": "other", "hosted": true, "trust": "open"}`); status != http.StatusBadRequest {
		t.Fatalf("PUT with another name in the body: %d %s, want 400", status, body)
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
