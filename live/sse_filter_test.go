package live_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

// mixedNotification is a notification of channel a, minute i, with one
// entry per loc, each with the given change.
func mixedNotification(i int, entries map[string]string) wire.Record {
	rec := hubtest.Record("a", i)
	var b strings.Builder
	locs := make([]string, 0, len(entries))
	for loc := range entries {
		locs = append(locs, loc)
	}
	slices.Sort(locs)
	for _, loc := range locs {
		fmt.Fprintf(&b, `<url><loc>%s</loc><rs:md change="%s" datetime="%s"/></url>`, loc, entries[loc], rec.Until.Format(time.RFC3339))
	}
	rec.Body = []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:md capability="change-notification" from="%s" until="%s"/>%s</urlset>`,
		rec.From.Format(time.RFC3339), rec.Until.Format(time.RFC3339), b.String()))
	rec.Entries = len(entries)
	return rec
}

// filterCase is what a session filtered with prefix http://example.com/keep/
// and change created,updated must get of mixed notifications.
type filterCase struct {
	recs []wire.Record
	want [][]string // locs of each notification, in order
}

func newFilterCase() filterCase {
	return filterCase{
		recs: []wire.Record{
			mixedNotification(1, map[string]string{
				"http://example.com/keep/1":  "created",
				"http://example.com/keep/2":  "deleted",
				"http://example.com/other/3": "updated",
			}),
			mixedNotification(2, map[string]string{"http://example.com/other/4": "created"}),
			mixedNotification(3, map[string]string{"http://example.com/keep/5": "updated"}),
		},
		want: [][]string{{"http://example.com/keep/1"}, {}, {"http://example.com/keep/5"}},
	}
}

func filterQuery(extra ...string) string {
	v := url.Values{}
	v.Set(wire.ParamChannels, "a")
	v.Add(wire.ParamPrefix, "http://example.com/keep/")
	v.Add(wire.ParamPrefix, "http://example.com/nothing/")
	v.Set(wire.ParamChange, "created,updated")
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v.Encode()
}

// checkFiltered checks the notifications got against the case, from
// record k on: only matching entries, the original from and until, and a
// notification for every record even without matching entries.
func checkFiltered(t *testing.T, what string, fc filterCase, k int, got []wsMsg) {
	t.Helper()
	if len(got) != len(fc.recs)-k {
		t.Fatalf("%s: %d notifications, want %d: one per record, matching entries or not", what, len(got), len(fc.recs)-k)
	}
	for i, m := range got {
		rec := fc.recs[k+i]
		var locs []string
		for _, e := range m.Entries {
			locs = append(locs, e.Loc)
		}
		if !slices.Equal(locs, fc.want[k+i]) && len(locs)+len(fc.want[k+i]) > 0 {
			t.Errorf("%s: seq %d entries %v, want %v", what, m.Seq, locs, fc.want[k+i])
		}
		if m.Entries == nil {
			t.Errorf("%s: seq %d entries null, want []", what, m.Seq)
		}
		if m.From != wire.FrameTime(rec.From) || m.Until != wire.FrameTime(rec.Until) {
			t.Errorf("%s: seq %d window %s..%s, want the original %s..%s", what, m.Seq, m.From, m.Until, wire.FrameTime(rec.From), wire.FrameTime(rec.Until))
		}
		if m.XML != nil && (strings.Contains(*m.XML, "/other/") || strings.Contains(*m.XML, "/keep/2")) {
			t.Errorf("%s: seq %d raw xml holds entries the filter drops: %s", what, m.Seq, *m.XML)
		}
	}
}

func TestFilterSession_OnlyMatchingEntriesOriginalWindowEmptyNotificationsKept(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	fc := newFilterCase()
	// records 0 and 1 are replayed, record 2 arrives live
	var seqs []uint64
	for _, r := range fc.recs[:2] {
		seqs = append(seqs, e.append(r))
	}
	cursor := seqs[0] - 1
	ws := e.mustDial(filterQuery(wire.ParamSince, fmt.Sprint(cursor), wire.ParamRaw, "1"))
	sse := e.mustOpenEvents(filterQuery(wire.ParamSince, fmt.Sprint(cursor)), nil)
	plain := e.mustOpenEvents(query("channels", "a", "since", fmt.Sprint(cursor)), nil) // unfiltered beside
	for _, ev := range readUntil(t, ws, seqs[1]) {
		if ev.Type == wire.FrameLive {
			t.Fatal("live before replay ended")
		}
	}
	sse.until(seqs[1])
	plain.until(seqs[1])
	if m := read(t, ws); m.Type != wire.FrameLive {
		t.Fatalf("websocket: %+v, want live", m)
	}
	if ev := sse.next(); ev.Type != wire.EventLive {
		t.Fatalf("events: %+v, want live", ev)
	}
	plain.next()
	seqs = append(seqs, e.append(fc.recs[2]))

	// a fresh pass over both sessions: replay and live together
	ws2 := e.mustDial(filterQuery(wire.ParamSince, fmt.Sprint(cursor), wire.ParamRaw, "1"))
	var gotWS []wsMsg
	for _, m := range readUntil(t, ws2, seqs[2]) {
		if m.Type == wire.FrameNotification {
			gotWS = append(gotWS, m)
		}
	}
	checkFiltered(t, "websocket replay", fc, 0, gotWS)
	if m := read(t, ws); m.Type != wire.FrameNotification {
		t.Fatalf("websocket live: %+v", m)
	} else {
		checkFiltered(t, "websocket live", fc, 2, []wsMsg{m})
	}
	sse2 := e.mustOpenEvents(filterQuery(wire.ParamSince, fmt.Sprint(cursor)), nil)
	var gotSSE []wsMsg
	for _, ev := range sse2.until(seqs[2]) {
		if ev.Type == wire.EventNotification {
			gotSSE = append(gotSSE, ev.msg)
		}
	}
	checkFiltered(t, "events replay", fc, 0, gotSSE)
	if ev := sse.next(); ev.Type != wire.EventNotification {
		t.Fatalf("events live: %+v", ev)
	} else {
		checkFiltered(t, "events live", fc, 2, []wsMsg{ev.msg})
	}
	// the unfiltered session beside gets every entry
	if ev := plain.next(); len(ev.msg.Entries) != 1 || ev.msg.Seq != seqs[2] {
		t.Errorf("unfiltered session: %+v", ev.msg)
	}
}
