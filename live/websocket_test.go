package live_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

func TestWebSocket_ReplayThenLiveFrameThenLive(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	var want []uint64
	for i := range 5 {
		want = append(want, e.append(hubtest.Record("a", i+1)))
	}
	c := e.mustDial(query("channels", "a", "since", "0"))
	for i, seq := range want {
		m := read(t, c)
		if m.Type != "notification" || m.Seq != seq || m.Channel != "a" {
			t.Fatalf("frame %d = %+v, want notification %d", i, m, seq)
		}
		until := wsBase.Add(time.Duration(i+1) * time.Minute).Format(time.RFC3339Nano)
		if m.Until != until || m.Topic != "http://example.com/a/changelist.xml" || m.ContentType != "application/xml" || m.Received == "" {
			t.Fatalf("envelope %+v", m)
		}
		if len(m.Entries) != 1 || m.Entries[0].Loc != fmt.Sprintf("http://example.com/a/%d", i+1) ||
			m.Entries[0].Change != "updated" || m.Entries[0].DateTime != until[:19]+"Z" ||
			m.Entries[0].Length == nil || *m.Entries[0].Length != 12 || m.Entries[0].Type != "text/plain" {
			t.Fatalf("entries %+v", m.Entries)
		}
		if m.XML != nil || m.Body != nil || m.Error != "" {
			t.Fatalf("raw fields without raw=1: %+v", m)
		}
	}
	if m := read(t, c); m.Type != "live" || m.Seq != want[4] {
		t.Fatalf("after replay: %+v, want live at %d", m, want[4])
	}
	for i := range 3 {
		seq := e.append(hubtest.Record("a", 6+i))
		if m := read(t, c); m.Type != "notification" || m.Seq != seq {
			t.Fatalf("live frame %+v, want %d", m, seq)
		}
	}
}

func TestWebSocket_NoCursorStartsLive(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	old := e.append(hubtest.Record("a", 1))
	c := e.mustDial(query("channels", "*"))
	if m := read(t, c); m.Type != "live" || m.Seq != old {
		t.Fatalf("first frame %+v, want live at %d", m, old)
	}
	seq := e.append(hubtest.Record("b", 2))
	if m := read(t, c); m.Seq != seq || m.Channel != "b" {
		t.Fatalf("frame %+v, want %d", m, seq)
	}
}

// TestWebSocket_SeamUnderConcurrentPublishing connects clients with a
// cursor while a publisher appends: each must get every later record of
// its channels exactly once and in order, across the replay/live seam.
func TestWebSocket_SeamUnderConcurrentPublishing(t *testing.T) {
	const total = 500
	e := newWSEnv(t, wsEnvOpts{})
	cursor, wait := e.appendConcurrently(t, total)
	clients := map[string]*websocket.Conn{}
	for _, chans := range []string{"*", "a", "a,c"} {
		clients[chans] = e.mustDial(query("channels", chans, "since", fmt.Sprint(cursor)))
	}
	appended := wait()
	if t.Failed() {
		return
	}
	for chans, c := range clients {
		want := seqsAfter(appended, cursor, chans)
		frames := readUntil(t, c, want[len(want)-1])
		if got := seqs(frames); !slices.Equal(got, want) {
			t.Errorf("channels=%s: got %d notifications, want %d after %d, exactly once in order (got %v...)",
				chans, len(got), len(want), cursor, got[:min(10, len(got))])
		}
		lives := 0
		for _, m := range frames {
			if m.Type == "live" {
				lives++
			}
			if m.Type == "gap" {
				t.Errorf("channels=%s: unexpected gap %+v", chans, m)
			}
		}
		if lives > 1 {
			t.Errorf("channels=%s: %d live frames", chans, lives)
		}
		if lives == 0 { // caught up only after the last record: the live frame follows
			if m := read(t, c); m.Type != "live" || m.Seq < want[len(want)-1] {
				t.Errorf("channels=%s: after the last record %+v, want live", chans, m)
			}
		}
	}
}

func TestWebSocket_GapFrameForCursorOlderThanRetention(t *testing.T) {
	e, first, last := pastRetention(t)
	c := e.mustDial(query("channels", "a", "since", "0"))
	m := read(t, c)
	if m.Type != "gap" || m.From2 != 1 || m.To < first-1 || m.Message == "" {
		t.Fatalf("first frame %+v, want gap from 1 to at least %d", m, first-1)
	}
	next := read(t, c)
	if next.Type != "notification" || next.Seq != m.To+1 {
		t.Fatalf("after gap %+v, want notification %d", next, m.To+1)
	}
	got := append([]uint64{next.Seq}, seqs(readUntil(t, c, last))...)
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("replay after the gap skips: %v", got)
		}
	}
	// A cursor inside retention gets no gap.
	c2 := e.mustDial(query("channels", "a", "since", fmt.Sprint(last-2)))
	if m := read(t, c2); m.Type != "notification" || m.Seq != last-1 {
		t.Fatalf("recent cursor: first frame %+v, want notification %d", m, last-1)
	}
}

func TestWebSocket_SinceTimeDeliversRecordsWithLaterUntil(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	var seqsA []uint64
	for i := range 10 {
		seqsA = append(seqsA, e.append(hubtest.Record("a", i+1)))
	}
	since := wsBase.Add(6*time.Minute + 30*time.Second).Format(time.RFC3339)
	c := e.mustDial(query("channels", "a", "since_time", since))
	got := seqs(readUntil(t, c, seqsA[9]))
	if !slices.Equal(got, seqsA[6:]) { // untils 7..10 minutes are after 6:30
		t.Fatalf("since_time=%s: got %v, want %v", since, got, seqsA[6:])
	}
	if m := read(t, c); m.Type != "live" || m.Seq != seqsA[9] {
		t.Fatalf("then %+v, want live", m)
	}
	// A since_time after every until replays nothing.
	c2 := e.mustDial(query("channels", "a", "since_time", wsBase.Add(time.Hour).Format(time.RFC3339)))
	if m := read(t, c2); m.Type != "live" {
		t.Fatalf("future since_time: first frame %+v, want live", m)
	}
}

func TestWebSocket_ChannelFilteringInReplayAndLive(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	byChan := map[string][]uint64{}
	add := func(n int) {
		for i := range n {
			ch := []string{"a", "b", "c"}[i%3]
			byChan[ch] = append(byChan[ch], e.append(hubtest.Record(ch, i+1)))
		}
	}
	add(9)
	ac := e.mustDial(query("channels", "a,c", "since", "0"))
	b := e.mustDial(query("channels", "b", "since", "0"))
	add(9)
	wantAC := append(slices.Clone(byChan["a"]), byChan["c"]...)
	slices.Sort(wantAC)
	if got := seqs(readUntil(t, ac, wantAC[len(wantAC)-1])); !slices.Equal(got, wantAC) {
		t.Errorf("channels=a,c got %v, want %v", got, wantAC)
	}
	if got := seqs(readUntil(t, b, byChan["b"][5])); !slices.Equal(got, byChan["b"]) {
		t.Errorf("channels=b got %v, want %v", got, byChan["b"])
	}
}

func TestWebSocket_RawAddsXMLOrBodyAndParseErrors(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	rs := hubtest.Record("a", 1)
	s1 := e.append(rs)
	s2 := e.append(wire.Record{Channel: "a", Topic: "t", ContentType: "text/plain", Body: []byte("hello"), Key: "plain"})
	s3 := e.append(wire.Record{Channel: "a", Topic: "t", ContentType: "application/xml", Body: []byte("<urlset"), Key: "broken"})
	raw := e.mustDial(query("channels", "a", "since", "0", "raw", "1"))
	plain := e.mustDial(query("channels", "a", "since", "0"))
	r := readUntil(t, raw, s3)
	p := readUntil(t, plain, s3)
	if r[0].XML == nil || *r[0].XML != string(rs.Body) || r[0].Body != nil || len(r[0].Entries) != 1 {
		t.Errorf("raw ResourceSync frame %+v", r[0])
	}
	if r[1].Body == nil || *r[1].Body != "hello" || r[1].XML != nil || len(r[1].Entries) != 0 || r[1].Entries == nil {
		t.Errorf("raw text frame %+v (seq %d)", r[1], s2)
	}
	if r[2].Error == "" || len(r[2].Entries) != 0 || r[2].XML == nil {
		t.Errorf("raw broken XML frame %+v", r[2])
	}
	if p[0].XML != nil || p[1].Body != nil || p[2].Error == "" || p[0].Seq != s1 {
		t.Errorf("plain frames carry raw content: %+v", p)
	}
}
