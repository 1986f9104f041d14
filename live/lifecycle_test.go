package live_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// lagLog is a log read through a cache that has not absorbed the records
// from a sequence on: Next finds none of them until a reader asks for the
// sequence reveal, when they all become visible and Changed fires, as a
// log cache's does once it catches up.
type lagLog struct {
	hub.Log
	mu      sync.Mutex
	from    uint64        // records from here on are not visible; 0: all are
	reveal  uint64        // a Next for this sequence makes them visible
	release chan struct{} // closed then
}

func (l *lagLog) hold(from, reveal uint64) {
	l.mu.Lock()
	l.from, l.reveal, l.release = from, reveal, make(chan struct{})
	l.mu.Unlock()
}

func (l *lagLog) Next(ctx context.Context, channel string, seq uint64) (wire.Record, error) {
	l.mu.Lock()
	if l.from > 0 && channel == "" && seq == l.reveal {
		l.from = 0
		close(l.release)
	}
	from := l.from
	l.mu.Unlock()
	rec, err := l.Log.Next(ctx, channel, seq)
	if err == nil && from > 0 && rec.Seq >= from {
		return wire.Record{}, hub.ErrNotFound
	}
	return rec, err
}

func (l *lagLog) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.from > 0 {
		return l.release
	}
	return l.Log.Changed()
}

// A session that starts while the log it reads lags the log's end (a cache
// not caught up yet) replays every record the log held when it started
// before its live frame, even though the live fan-out, started with Run
// before those records, has not reached them: the session waits for the
// log to show its last record (the lag ends when a reader asks for it).
func TestSessions_ReplayReachesTheLogsEndBeforeLive(t *testing.T) {
	lag := &lagLog{}
	e := newWSEnv(t, wsEnvOpts{over: func(l hub.Log) hub.Log { lag.Log = l; return lag }})
	watcher := e.mustDial(query("channels", "a"))
	if m := read(t, watcher); m.Type != wire.FrameLive {
		t.Fatalf("first frame %+v, want live", m)
	}
	last := e.append(hubtest.Record("a", 1))
	readUntil(t, watcher, last) // the fan-out has reached it
	for i, open := range []string{"websocket", "events"} {
		lag.hold(last+1, last+2) // the log's sequences have no holes here
		e.append(hubtest.Record("a", 2*i+2))
		third := e.append(hubtest.Record("a", 2*i+3))
		var got []uint64
		if open == "websocket" {
			c := e.mustDial(query("channels", "a", "since", "0"))
			for m := read(t, c); m.Type != wire.FrameLive; m = read(t, c) {
				got = append(got, m.Seq)
			}
		} else {
			ev := e.mustOpenEvents(query("channels", "a", "since", "0"), nil)
			for m := ev.next(); m.Type != wire.EventLive; m = ev.next() {
				got = append(got, m.msg.Seq)
			}
		}
		if len(got) == 0 || got[len(got)-1] != third {
			t.Fatalf("%s: replay %v before live, want it to end at %d", open, got, third)
		}
		readUntil(t, watcher, third) // the fan-out has reached third
		last = third
	}
}

// When Run's context ends, every session of either kind is closed with
// CloseGoingAway and its resume cursor, and Run returns only once they
// have all ended.
func TestSessions_RunEndsEverySession(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{})
	last := e.append(hubtest.Record("a", 1))
	c := e.mustDial(query("channels", "a", "since", "0"))
	readUntil(t, c, last)
	ev := e.mustOpenEvents(query("channels", "a", "since", "0"), nil)
	ev.until(last)
	testenv.Eventually(t, wsTimeout, func() bool { return e.ws.WebSocketCount() == 1 && e.ws.EventsCount() == 1 }, "sessions open")
	done := make(chan error, 1)
	go func() { done <- e.stop() }()
	ce, _ := closeError(t, c)
	if ce.Code != wire.CloseGoingAway {
		t.Fatalf("WebSocket closed with %d %q, want %d", ce.Code, ce.Text, wire.CloseGoingAway)
	}
	evs := ev.rest()
	if n := len(evs); n == 0 || evs[n-1].Type != wire.EventEnd || evs[n-1].end.Code != wire.CloseGoingAway || evs[n-1].end.Since != last {
		t.Fatalf("events after Run's end %+v, want end %d since=%d", evs, wire.CloseGoingAway, last)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, m := e.ws.WebSocketCount(), e.ws.EventsCount(); n != 0 || m != 0 {
		t.Fatalf("after Run returned: %d WebSocket and %d Server-Sent Events sessions open", n, m)
	}
}
