package live_test

import (
	"testing"

	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

// raceRounds is how many sessions each test opens: the race they look for
// (a record appended right after the stream opened) is a window of a few
// steps in the session's start, hit in some rounds, not every one.
const raceRounds = 40

// A session that asks for no cursor receives a record appended as soon as
// its headers arrive (an EventSource's onopen): it takes its position in
// the log before they are sent. The session's live frame says where it
// joined: a live frame at or past the record before the record came is the
// record missed.
func TestEvents_NoCursorSessionReceivesWhatIsAppendedAtOpen(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	for i := 1; i <= raceRounds; i++ {
		c := e.mustOpenEvents(query("channels", "a"), nil) // returns once the headers are in
		seq := e.append(hubtest.Record("a", i))
		for got := false; !got; {
			ev := c.next()
			switch {
			case ev.Type == wire.EventNotification && ev.msg.Seq == seq:
				got = true
			case ev.Type == wire.EventLive && ev.msg.Seq >= seq:
				t.Fatalf("round %d: the session joined live at %d without seq %d, appended once its headers arrived", i, ev.msg.Seq, seq)
			}
		}
		c.close()
	}
}

// The same for a WebSocket session: it takes its position before the
// handshake's answer.
func TestWebSocket_NoCursorSessionReceivesWhatIsAppendedAtOpen(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	for i := 1; i <= raceRounds; i++ {
		c := e.mustDial(query("channels", "a"))
		seq := e.append(hubtest.Record("a", i))
		for got := false; !got; {
			m := read(t, c)
			switch {
			case m.Type == wire.FrameNotification && m.Seq == seq:
				got = true
			case m.Type == wire.FrameLive && m.Seq >= seq:
				t.Fatalf("round %d: the session joined live at %d without seq %d, appended once the handshake was answered", i, m.Seq, seq)
			}
		}
		_ = c.Close()
	}
}
