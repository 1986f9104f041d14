package live_test

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/live"
	"github.com/rshub/rshub/wire"
)

// frameReader reads the frames of one session, WebSocket or Server-Sent
// Events, each with the id a client resumes from.
type frameReader func() (wire.Frame, string)

// openFrames opens a session of kind "ws" or "sse" with query, the SSE
// one with the Last-Event-ID lastID when not "".
func openFrames(t *testing.T, e *wsEnv, kind, query, lastID string) frameReader {
	t.Helper()
	if kind == "ws" {
		c := e.mustDial(query)
		return func() (wire.Frame, string) {
			t.Helper()
			_ = c.SetReadDeadline(time.Now().Add(wsTimeout))
			_, b, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			f, err := wire.DecodeFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case f.Notification != nil:
				return f, f.Notification.ID
			case f.Live != nil:
				return f, f.Live.ID
			case f.Reset != nil:
				return f, f.Reset.ID
			}
			return f, ""
		}
	}
	hdr := http.Header{}
	if lastID != "" {
		hdr.Set(wire.HeaderLastEventID, lastID)
	}
	c := e.mustOpenEvents(query, hdr)
	return func() (wire.Frame, string) {
		t.Helper()
		ev := c.next()
		f, err := wire.DecodeFrame([]byte(ev.Data))
		if err != nil || f.Type != ev.Type {
			t.Fatalf("event %+v: %v", ev, err)
		}
		return f, ev.ID
	}
}

// TestSession_CursorTheLogCannotServeGetsAReset checks both kinds of
// session against a log holding 1..3: a cursor ahead of the log's end, or
// from another log (another epoch), given as since= or as Last-Event-ID,
// gets a reset frame naming the log's first and last sequence and epoch,
// then the whole log from its first record and the live frame; a cursor
// of this log, with or without its epoch, resumes where it says.
func TestSession_CursorTheLogCannotServeGetsAReset(t *testing.T) {
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{PingInterval: time.Hour}})
	var all []uint64
	for i := range 3 {
		all = append(all, e.append(hubtest.Record("a", i)))
	}
	epoch := e.log.Epoch()
	if !wire.ValidEpoch(epoch) {
		t.Fatalf("log epoch %q", epoch)
	}
	tests := []struct {
		name, since, lastID string
		sse                 bool
		reset               bool
		want                []uint64
	}{
		{name: "ahead", since: "5000", reset: true, want: all},
		{name: "ahead with this epoch", since: e.id(5000), reset: true, want: all},
		{name: "another epoch", since: "0123456789abcdef-2", reset: true, want: all},
		{name: "another epoch at 0", since: "0123456789abcdef-0", reset: true, want: all},
		{name: "Last-Event-ID ahead", lastID: "5000", sse: true, reset: true, want: all},
		{name: "Last-Event-ID of another epoch", lastID: "zz-1", sse: true, reset: true, want: all},
		{name: "this epoch", since: e.id(all[1]), want: all[2:]},
		{name: "bare sequence", since: "1", want: all[1:]},
		{name: "at the end", since: e.id(all[2])},
		{name: "Last-Event-ID of this epoch", lastID: e.id(all[0]), sse: true, want: all[1:]},
	}
	for _, tt := range tests {
		kinds := []string{"ws", "sse"}
		if tt.sse {
			kinds = []string{"sse"}
		}
		for _, kind := range kinds {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				q := query("channels", "*", "since", tt.since)
				if tt.since == "" {
					q = query("channels", "*")
				}
				next := openFrames(t, e, kind, q, tt.lastID)
				f, id := next()
				if tt.reset {
					r := f.Reset
					if r == nil || r.Epoch != epoch || r.First != all[0] || r.Last != all[2] || r.Since != all[0]-1 ||
						id != e.id(all[0]-1) || r.ID != id || r.Message == "" {
						t.Fatalf("first frame %+v id %q; want a reset naming %s, %d..%d, resuming after %d", r, id, epoch, all[0], all[2], all[0]-1)
					}
					f, id = next()
				}
				var got []uint64
				for f.Live == nil {
					if f.Notification == nil {
						t.Fatalf("frame %+v; want notifications then live", f)
					}
					if id != e.id(f.Notification.Seq) {
						t.Errorf("notification %d has id %q, want %q", f.Notification.Seq, id, e.id(f.Notification.Seq))
					}
					got = append(got, f.Notification.Seq)
					f, id = next()
				}
				if !slices.Equal(got, tt.want) || f.Live.Seq != all[2] || id != e.id(all[2]) {
					t.Fatalf("notifications %v then live %+v (id %q); want %v then live at %d", got, f.Live, id, tt.want, all[2])
				}
			})
		}
	}
}

// staleBounds is a log whose Bounds, while stale is above 0, reports a
// last sequence one short, as a hub that has not yet seen the newest
// record of a cluster's log.
type staleBounds struct {
	hub.Log
	stale atomic.Int32
}

func (l *staleBounds) Bounds(ctx context.Context) (uint64, uint64, error) {
	first, last, err := l.Log.Bounds(ctx)
	if l.stale.Add(-1) >= 0 && last > 0 {
		last--
	}
	return first, last, err
}

func (l *staleBounds) Epoch() string { return l.Log.(interface{ Epoch() string }).Epoch() }

// TestSession_CursorJustAheadWaitsForTheLog gives a session a cursor its
// hub's view of the log has not reached yet, as when another hub of a
// cluster handed it out a moment before: the session looks again and
// resumes after it, with no reset.
func TestSession_CursorJustAheadWaitsForTheLog(t *testing.T) {
	var view *staleBounds
	e := newWSEnv(t, wsEnvOpts{ws: live.Config{PingInterval: time.Hour},
		over: func(l hub.Log) hub.Log { view = &staleBounds{Log: l}; return view }})
	last := e.append(hubtest.Record("a", 0))
	if f, _ := openFrames(t, e, "ws", query("channels", "*"), "")(); f.Live == nil { // the dispatcher has started
		t.Fatalf("first frame %+v, want live", f)
	}
	for _, kind := range []string{"ws", "sse"} {
		view.stale.Store(1)
		next := openFrames(t, e, kind, query("channels", "*", "since", e.id(last)), "")
		if f, id := next(); f.Live == nil || f.Live.Seq != last || id != e.id(last) {
			t.Fatalf("%s: first frame %+v id %q; want live at %d, no reset", kind, f, id, last)
		}
	}
}
