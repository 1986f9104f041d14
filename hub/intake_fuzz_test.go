package hub_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// FuzzFatPing drives the fat-ping handler, with a real log behind it, with
// mutated notification bodies and Link headers. Whatever it is sent, the
// hub answers no 5xx but 503, keeps the channel's anchor within the clock
// skew limit, still accepts a valid notification right after (one that
// starts at the anchor), and its log holds exactly what it acknowledged.
func FuzzFatPing(f *testing.F) {
	f.Add([]byte(hubtest.Notif("change-notification", t0, t1, "2013-01-03T00:07:22Z")), hubtest.IntakeLinks)
	f.Add([]byte(hubtest.Notif("change-notification", "2014-01-01T00:00:00Z", "9999-12-31T23:59:59Z")), hubtest.IntakeLinks)
	f.Add([]byte("<urlset><rs:md"), `<`+hubtest.IntakeTopic+`>; rel="self"`)
	z := hubtest.NewIntake(f, nil, nil)
	f.Fuzz(func(t *testing.T, body []byte, link string) {
		status, resp := z.Post(t, body, link)
		if status >= 500 && status != http.StatusServiceUnavailable {
			t.Fatalf("fuzzed publish answered %d %q", status, resp)
		}
		z.CheckLog(t)
		// the channel is not wedged: a notification that starts at its
		// anchor is accepted
		st, err := z.Hub.ChannelState(context.Background(), hubtest.IntakeTopic)
		if err != nil && !errors.Is(err, hub.ErrNotFound) {
			t.Fatal(err)
		}
		anchor := st.LastUntil
		if limit := time.Now().Add(hub.DefaultMaxClockSkew); anchor.After(limit) {
			t.Fatalf("the anchor %v is beyond the clock skew limit: every correctly dated notification would be refused", anchor)
		}
		if anchor.IsZero() {
			anchor = hubtest.MustTime(t0)
		}
		at := anchor.UTC().Format(time.RFC3339Nano)
		valid := hubtest.Notif("change-notification", at, at)
		if status, resp := z.Post(t, []byte(valid), hubtest.IntakeLinks); status != http.StatusOK {
			t.Fatalf("a valid notification after the fuzzed one: %d %q", status, resp)
		}
		z.CheckLog(t)
	})
}
