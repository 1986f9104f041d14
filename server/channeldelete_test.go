package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// TestDeleteChannel_GoneAtOnceFromTheHubThatDeletedIt: right after
// DELETE /admin/channels/{name} answers, the hub that deleted the channel
// answers 404 for its topic, its framework topic, its Capability List and
// its Atom feed, and its Source Description no longer lists it.
func TestDeleteChannel_GoneAtOnceFromTheHubThatDeletedIt(t *testing.T) {
	const token = "admin-token-0123456789abcdef"
	st := servertest.Start(t, nil, func(c *server.Config) { c.AdminToken = token })
	base := "http://" + st.Addr
	admin := func(method, path, body string) int {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	docs := []string{wire.TopicPath("gone"), wire.FrameworkTopicPath("gone"), wire.CapabilityListPath("gone"), wire.FeedPath("gone")}
	described := func() bool {
		resp, err := http.Get(base + wire.PathWellKnown)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(b), wire.CapabilityListPath("gone"))
	}
	if code := admin(http.MethodPost, "/admin/channels", `{"name": "gone", "hosted": true, "trust": "open"}`); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	for _, d := range docs {
		if code := status(t, http.MethodGet, base+d); code/100 != 2 {
			t.Fatalf("GET %s of a live channel: %d", d, code)
		}
	}
	if !described() {
		t.Fatal("the Source Description does not list the new channel")
	}
	if code := admin(http.MethodDelete, "/admin/channels/gone", ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	for _, d := range docs {
		if code := status(t, http.MethodGet, base+d); code != http.StatusNotFound {
			t.Errorf("GET %s right after the deletion: %d, want 404", d, code)
		}
	}
	if described() {
		t.Error("the Source Description lists the channel right after its deletion")
	}
}
