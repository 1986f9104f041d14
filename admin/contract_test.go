package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A channel with no notification yet shows its own topic as its state's,
// and no empty time (every answer here passes the fixture's contract
// check, which refuses a zero time and an empty URI).
func TestChannels_FreshChannelStateNamesItsTopicAndNoEmptyTime(t *testing.T) {
	f := newFixture(t)
	if code, body := f.adminDo(http.MethodPost, "/admin/channels", `{"name": "fresh", "topic": "http://127.0.0.1:1/fresh", "trust": "open"}`); code != http.StatusCreated {
		t.Fatalf("creating the channel: %d %s", code, body)
	}
	code, body := f.adminDo(http.MethodGet, "/admin/channels/fresh", "")
	if code != http.StatusOK {
		t.Fatalf("GET: %d %s", code, body)
	}
	var v struct {
		State map[string]any `json:"state"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.State["topic"] != "http://127.0.0.1:1/fresh" {
		t.Errorf("state.topic = %v, want the channel's topic", v.State["topic"])
	}
	for _, k := range []string{"lastFrom", "lastUntil"} {
		if _, ok := v.State[k]; ok {
			t.Errorf("state.%s = %v for a channel with no notification, want it left out", k, v.State[k])
		}
	}
}

// The quarantine is one bounded list: a cursor or a limit is refused, as a
// bad cursor is by every paged list, not ignored.
func TestQuarantine_RefusesACursorLikeEveryList(t *testing.T) {
	f := newFixture(t)
	for _, q := range []string{"?cursor=zz", "?limit=5"} {
		code, body := f.adminDo(http.MethodGet, "/admin/quarantine"+q, "")
		if code != http.StatusBadRequest || !strings.Contains(body, "not paged") {
			t.Errorf("GET /admin/quarantine%s: %d %s, want 400 naming why", q, code, body)
		}
	}
	if code, body := f.adminDo(http.MethodGet, "/admin/quarantine", ""); code != http.StatusOK {
		t.Errorf("GET /admin/quarantine: %d %s", code, body)
	}
}
