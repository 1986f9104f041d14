package admin_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
)

// continuity reads GET /admin/channels/{name}/continuity.
func (f *fixture) continuity(name string) admin.ContinuityView {
	f.T.Helper()
	status, body := f.adminDo(http.MethodGet, "/admin/channels/"+name+"/continuity", "")
	if status != http.StatusOK {
		f.T.Fatalf("GET continuity: %d %q", status, body)
	}
	var v admin.ContinuityView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		f.T.Fatalf("continuity JSON %q: %v", body, err)
	}
	return v
}

// GET /admin/channels/{name}/continuity shows the anchor, the last
// sequence and the gaps; lists are [] when empty.
func TestAdminContinuity_ShowsAnchorAndGaps(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	status, raw := f.adminDo(http.MethodGet, "/admin/channels/"+ch.Name+"/continuity", "")
	if status != 200 || !strings.Contains(raw, `"gaps": []`) || !strings.Contains(raw, `"resets": []`) || !strings.Contains(raw, `"anchored": false`) {
		t.Fatalf("new channel: %d %s", status, raw)
	}
	f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
	f.PostXML(hubtest.Notif("change-notification", t2, t3), hubtest.Links(ch.Topic, f.URL))
	v := f.continuity(ch.Name)
	if !v.Anchored || !v.LastUntil.Equal(hubtest.MustTime(t3)) || v.LastSeq != 2 || v.Published != 2 || len(v.Gaps) != 1 ||
		!v.Gaps[0].From.Equal(hubtest.MustTime(t1)) || v.Channel != ch.Name || v.Topic != ch.Topic || v.MaxClockSkew != 300 {
		t.Fatalf("continuity %+v", v)
	}
}

// A reset without a body clears the anchor: the next notification is
// accepted as the first. The reset is logged and recorded in the
// channel's state.
func TestAdminContinuity_ResetClearsAnchor(t *testing.T) {
	logs := &testenv.Buffer{}
	f := newFixture(t, func(c *hub.Config, _ *admin.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	f.PostXML(hubtest.Notif("change-notification", t0, t2), hubtest.Links(ch.Topic, f.URL))
	// the Source lost its state and starts again from t0
	status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
	if status != 409 || !strings.Contains(resp, "/admin/channels/"+ch.Name+"/continuity") {
		t.Fatalf("before the reset: %d %q, want 409 pointing at the continuity endpoint", status, resp)
	}
	status, raw := f.adminDo(http.MethodPost, "/admin/channels/"+ch.Name+"/continuity/reset", "")
	var v admin.ContinuityView
	if status != 200 || json.Unmarshal([]byte(raw), &v) != nil || v.Anchored || len(v.Resets) != 1 ||
		!v.Resets[0].PrevUntil.Equal(hubtest.MustTime(t2)) || !v.Resets[0].Until.IsZero() || v.Resets[0].Seq != 1 || v.Resets[0].Gen != 1 {
		t.Fatalf("reset: %d %s", status, raw)
	}
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); status != 200 || strings.Contains(resp, "gap") {
		t.Fatalf("after the reset: %d %q, want 200 as the first", status, resp)
	}
	// recorded in the state the admin API shows, and logged
	_, raw = f.adminDo(http.MethodGet, "/admin/channels/"+ch.Name, "")
	var cv admin.ChannelView
	if err := json.Unmarshal([]byte(raw), &cv); err != nil || len(cv.State.Resets) != 1 || !cv.State.LastUntil.Equal(hubtest.MustTime(t1)) {
		t.Fatalf("channel view %s: %v", raw, err)
	}
	if l := logs.String(); !strings.Contains(l, "continuity anchor reset") || !strings.Contains(l, "previous_until="+t2) {
		t.Fatalf("reset not logged:\n%s", l)
	}
}

// A reset with {"until": T} sets the anchor to T: the next notification
// must start at T.
func TestAdminContinuity_ResetToInstant(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	f.PostXML(hubtest.Notif("change-notification", t0, t3), hubtest.Links(ch.Topic, f.URL))
	if status, raw := f.adminDo(http.MethodPost, "/admin/channels/"+ch.Name+"/continuity/reset", `{"until": "`+t1+`"}`); status != 200 {
		t.Fatalf("reset: %d %s", status, raw)
	}
	if v := f.continuity(ch.Name); !v.Anchored || !v.LastUntil.Equal(hubtest.MustTime(t1)) || v.LastSeq != 1 {
		t.Fatalf("after reset: %+v", v)
	}
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); status != 409 {
		t.Fatalf("[t0, t1] before the anchor: %d %q, want 409", status, resp)
	}
	if status, resp := f.PostXML(hubtest.Notif("change-notification", t1, t2), hubtest.Links(ch.Topic, f.URL)); status != 200 || strings.Contains(resp, "gap") {
		t.Fatalf("[t1, t2] from the anchor: %d %q", status, resp)
	}
}

// A reset the hub cannot do is refused with a reason and changes nothing.
func TestAdminContinuity_ResetRefusals(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL))
	reset := "/admin/channels/" + ch.Name + "/continuity/reset"
	for _, tc := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"NotJSON", reset, `until=now`, 400, "reset JSON"},
		{"UnknownField", reset, `{"since": "` + t0 + `"}`, 400, "unknown field"},
		{"NotRFC3339", reset, `{"until": "yesterday"}`, 400, "RFC 3339"},
		{"FarFuture", reset, `{"until": "9999-12-31T23:59:59Z"}`, 400, "at most 5m0s ahead"},
		{"TooLarge", reset, `{"until": "` + strings.Repeat(" ", 5000) + `"}`, 413, "exceeds"},
		{"UnknownChannel", "/admin/channels/nope/continuity/reset", ``, 404, "no channel named nope"},
		{"InvalidName", "/admin/channels/a.b/continuity/reset", ``, 400, "channel name"},
		{"NulName", "/admin/channels/%00/continuity/reset", ``, 400, "channel name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp := f.adminDo(http.MethodPost, tc.path, tc.body)
			if status != tc.status || !strings.Contains(resp, tc.want) {
				t.Fatalf("got %d %q, want %d mentioning %q", status, resp, tc.status, tc.want)
			}
			if v := f.continuity(ch.Name); !v.LastUntil.Equal(hubtest.MustTime(t1)) || len(v.Resets) != 0 {
				t.Fatalf("a refused reset changed the state: %+v", v)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodPost, f.Server.URL+reset, nil)
	if status, _ := hubtest.Do(t, req); status != http.StatusUnauthorized {
		t.Fatalf("without the admin token: %d, want 401", status)
	}
}

// Hubs sharing one log and store follow a reset made through any of them:
// a hub whose working state predates the reset applies it before refusing
// a notification, never writes its older state over it, and a hub started
// afterwards starts from it.
func TestAdminContinuity_ResetFollowedAcrossHubs(t *testing.T) {
	a := newFixture(t)
	ch := a.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	frozen := time.Now()
	newHub := func() (*hub.Hub, func(string) (int, string)) {
		mux := http.NewServeMux()
		srv := httptest.NewServer(hubtest.LoadContract(t).Validating(t, mux))
		t.Cleanup(srv.Close)
		// a frozen clock: the hub never compares with the store because
		// time passed, only because a notification looks out of order
		h, err := hub.New(hub.Config{HubURL: a.URL, Store: a.Store, Log: a.Log, Client: http.DefaultClient,
			Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return frozen }})
		if err != nil {
			t.Fatal(err)
		}
		h.Register(mux)
		return h, func(body string) (int, string) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/xml")
			req.Header.Set("Link", wire.NotificationLinks(ch.Topic, a.URL, ""))
			return hubtest.Do(t, req)
		}
	}
	reset := func(body, wantPrev string) {
		t.Helper()
		s, raw := a.adminDo(http.MethodPost, "/admin/channels/"+ch.Name+"/continuity/reset", body)
		if s != 200 || !strings.Contains(raw, `"prevUntil": "`+wantPrev+`"`) {
			t.Fatalf("reset %s through A: %d %s, want the previous until %s", body, s, raw, wantPrev)
		}
	}
	b, postB := newHub() // b has no Run: its state reaches the store only when the test flushes it
	if s, r := a.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, a.URL)); s != 200 {
		t.Fatalf("A: %d %q", s, r)
	}
	if s, r := postB(hubtest.Notif("change-notification", t1, t3)); s != 200 {
		t.Fatalf("B: %d %q", s, r)
	}
	// A catches up with B's notification from the log before resetting
	reset(`{"until": "`+t1+`"}`, t3)
	// B still believes t3: it applies the reset before refusing
	if s, r := postB(hubtest.Notif("change-notification", t1, t2)); s != 200 {
		t.Fatalf("B after the reset through A: %d %q", s, r)
	}
	// a second reset, while B's working state is changed and not yet stored
	reset("", t2)
	b.FlushStates(context.Background())
	st, err := a.Store.ChannelState(context.Background(), ch.Topic)
	if err != nil || !st.LastUntil.IsZero() || len(st.Resets) != 2 || st.Resets[1].Seq != 3 {
		t.Fatalf("stored state after B's flush: %+v %v, want the second reset kept", st, err)
	}
	// a hub started now picks up from the stored reset and the log
	c, postC := newHub()
	if s, r := postC(hubtest.Notif("change-notification", t1, t2)); s != 200 || !strings.Contains(r, "duplicate") {
		t.Fatalf("C, B's last notification again: %d %q, want a duplicate", s, r)
	}
	if s, r := postC(hubtest.Notif("change-notification", t2, t3)); s != 200 || strings.Contains(r, "gap") {
		t.Fatalf("C continuing: %d %q", s, r)
	}
	got, err := c.Continuity(context.Background(), ch)
	if err != nil || !got.LastUntil.Equal(hubtest.MustTime(t3)) || got.LastSeq != 4 || len(got.Resets) != 2 {
		t.Fatalf("C's continuity %+v %v", got, err)
	}
	if a.LastSeq() != 4 {
		t.Fatalf("log holds %d records, want 4", a.LastSeq())
	}
}
