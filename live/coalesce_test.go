package live_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

// historyRecord is notification i of a history over a few resources, with
// the changes given (created only when absent, updated or deleted only when
// present).
func historyRecord(channel string, i int, changes map[string]string) wire.Record {
	from, until := wsBase.Add(time.Duration(i-1)*time.Minute), wsBase.Add(time.Duration(i)*time.Minute)
	body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="change-notification" from="%s" until="%s"/>
`, from.Format(time.RFC3339), until.Format(time.RFC3339))
	for loc, ch := range changes {
		body += fmt.Sprintf("  <url><loc>%s</loc><rs:md change=%q datetime=%q/></url>\n", loc, ch, until.Format(time.RFC3339))
	}
	body += "</urlset>"
	return wire.Record{Topic: "http://example.com/" + channel + "/changelist.xml", Channel: channel, From: from, Until: until,
		ContentType: "application/xml", Key: fmt.Sprintf("%s-h-%d-%d", channel, i, time.Now().UnixNano()), Body: []byte(body), Entries: len(changes)}
}

// A session that asks for coalesce=1 gets its channel's backlog as few
// coalesced notifications whose net changes leave a destination in the
// state every notification would, with the run's last sequence as seq;
// then the live notifications one by one.
func TestWebSocket_CoalescedReplayGivesTheSameStateInFewerFrames(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	rng := rand.New(rand.NewPCG(16, 16))
	present := map[string]bool{}
	var last uint64
	const n = 80
	for i := 1; i <= n; i++ {
		loc := fmt.Sprintf("http://example.com/r/%d", rng.IntN(6))
		ch := "created"
		if present[loc] {
			ch = []string{"updated", "deleted"}[rng.IntN(2)]
		}
		present[loc] = ch != "deleted"
		last = e.append(historyRecord("a", i, map[string]string{loc: ch}))
		if i%20 == 0 {
			e.append(hubtest.Record("b", i)) // another channel's records interleave
		}
	}
	c := e.mustDial(query("channels", "a", "since", "0", "coalesce", "1"))
	frames := readUntil(t, c, last)
	got := map[string]bool{}
	notifications := 0
	for _, m := range frames {
		if m.Type != "notification" {
			continue
		}
		notifications++
		for _, en := range m.Entries {
			got[en.Loc] = en.Change != "deleted"
		}
	}
	for loc, want := range present {
		if got[loc] != want {
			t.Errorf("%s present=%v after the coalesced replay, want %v", loc, got[loc], want)
		}
	}
	for loc, g := range got {
		if g && !present[loc] {
			t.Errorf("%s present after the coalesced replay, absent at the Source", loc)
		}
	}
	if notifications >= n/4 {
		t.Errorf("%d notification frames for a backlog of %d: not coalesced", notifications, n)
	}
	if s := seqs(frames); s[len(s)-1] != last {
		t.Fatalf("the last coalesced frame has seq %d, want the run's last sequence %d", s[len(s)-1], last)
	}
	live := e.append(historyRecord("a", n+1, map[string]string{"http://example.com/r/live": "created"}))
	if m := readUntil(t, c, live); m[len(m)-1].Seq != live || len(m[len(m)-1].Entries) != 1 {
		t.Fatalf("live after the coalesced replay: %+v", m[len(m)-1])
	}
}

func TestWebSocket_CoalesceNeedsOneChannelAndACursor(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	for _, q := range []string{
		query("channels", "a", "coalesce", "1"),
		query("channels", "*", "since", "0", "coalesce", "1"),
		query("channels", "a,b", "since", "0", "coalesce", "1"),
		query("channels", "a", "since", "0", "coalesce", "yes"),
	} {
		_, resp, err := e.dial(q, nil, 0)
		if err == nil || statusOf(resp) != http.StatusBadRequest {
			t.Errorf("%s: %v, status %d, want 400", q, err, statusOf(resp))
		}
	}
}
