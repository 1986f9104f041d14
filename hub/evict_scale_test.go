package hub_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// withMaxStates bounds the hub's working channel states.
func withMaxStates(n int) fixtureOpt {
	return func(c *hub.Config) { c.MaxChannelStates = n }
}

// openChannels creates n open channels and returns them.
func (f *fixture) openChannels(n int) []hub.Channel {
	f.T.Helper()
	out := make([]hub.Channel, n)
	for i := range out {
		out[i] = f.Channel(hub.Channel{Topic: fmt.Sprintf("http://127.0.0.1:1/scale/%d/", i), Trust: hub.TrustOpen})
	}
	return out
}

// publish posts a notification for [from, until] to ch and fails the test
// unless it is answered want; it returns the answer's text.
func (f *fixture) publish(ch hub.Channel, from, until string, want int) string {
	f.T.Helper()
	status, resp := f.PostXML(hubtest.Notif("change-notification", from, until, from), hubtest.Links(ch.Topic, f.URL))
	if status != want {
		f.T.Fatalf("publish [%s, %s] to %s: status %d %q, want %d", from, until, ch.Name, status, resp, want)
	}
	return resp
}

// settle flushes the hub's working states until its per-channel memory
// satisfies ok, failing after a deadline (the background flusher may hold
// a state that is being written).
func (f *fixture) settle(what string, ok func(hub.ChannelMemory) bool) hub.ChannelMemory {
	f.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.Hub.FlushStates(context.Background())
		m := f.Hub.ChannelMemory()
		if ok(m) {
			return m
		}
		if time.Now().After(deadline) {
			f.T.Fatalf("%s: still %+v after 10s", what, m)
		}
	}
}

// at returns the RFC 3339 time minutes after t0.
func at(minutes int) string {
	return hubtest.MustTime(t0).Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
}

// A cache over MaxChannelStates is trimmed with room to spare (to seven
// eighths), so that a hub publishing to a new channel now and then does
// not scan the whole cache at every flush: a cache trimmed to the limit
// exactly is over it again at the next new channel. A state the hub's own
// flusher is writing when the trim comes is dropped at a later flush, not
// left over the seven eighths.
func TestChannelMemory_FullCachesTrimmedWithRoom(t *testing.T) {
	const limit = 16
	f := newFixture(t, withMaxStates(limit))
	chs := f.openChannels(limit + 2)
	for _, ch := range chs[:limit+1] {
		f.publish(ch, at(0), at(10), http.StatusOK)
	}
	m := f.settle("working states trimmed", func(m hub.ChannelMemory) bool { return m.Dirty == 0 && m.States <= limit*7/8 })
	if m.Definitions != limit*7/8 || m.States != limit*7/8 {
		t.Fatalf("over the limit of %d: %d definitions and %d states kept, want %d of each", limit, m.Definitions, m.States, limit*7/8)
	}
	f.publish(chs[limit+1], at(0), at(10), http.StatusOK)
	m = f.settle("working states", func(m hub.ChannelMemory) bool { return m.Dirty == 0 })
	if m.Definitions != limit*7/8+1 {
		t.Fatalf("under the limit: %d definitions kept, want %d (none dropped)", m.Definitions, limit*7/8+1)
	}
}

// Publishing to many more channels than MaxChannelStates leaves at most
// that many working states, and cached definitions only for channels looked
// up within their cache lifetime.
func TestChannelMemory_BoundedByMaxChannelStates(t *testing.T) {
	const limit, channels = 16, 160
	f := newFixture(t, withMaxStates(limit))
	chs := f.openChannels(channels)
	for round := range 2 {
		for _, ch := range chs {
			f.publish(ch, at(10*round), at(10*round+10), http.StatusOK)
		}
	}
	f.settle("working states", func(m hub.ChannelMemory) bool { return m.States <= limit && m.Dirty == 0 })
	f.Clock.Advance(3 * time.Second) // past the definitions' cache lifetime
	f.settle("cached definitions", func(m hub.ChannelMemory) bool { return m.Definitions <= limit })
	// The hub's own flusher takes a channel's lock for a moment too: with
	// no request in flight, every lock is given back.
	f.settle("channel locks", func(m hub.ChannelMemory) bool { return m.Locks == 0 })
}

// A channel whose working state was dropped is checked exactly as before:
// a replay is a duplicate, an overlap is refused, a gap is recorded, and
// its progress counts every notification.
func TestChannelMemory_EvictedChannelKeepsContinuity(t *testing.T) {
	const limit = 2
	f := newFixture(t, withMaxStates(limit))
	chs := f.openChannels(1 + 4*limit)
	a, others := chs[0], chs[1:]
	evictA := func() {
		t.Helper()
		for _, ch := range others { // use the others after a
			f.publish(ch, at(0), at(1), http.StatusOK)
		}
		f.settle("a's state dropped", func(m hub.ChannelMemory) bool { return m.States <= limit && m.Dirty == 0 })
	}

	f.publish(a, at(0), at(10), http.StatusOK)
	evictA()
	body := hubtest.Notif("change-notification", at(0), at(10), at(0))
	if status, resp := f.PostXML(body, hubtest.Links(a.Topic, f.URL)); status != http.StatusOK || !strings.Contains(resp, "duplicate") {
		t.Fatalf("replay after eviction: %d %q, want a duplicate", status, resp)
	}
	evictA()
	f.publish(a, at(5), at(15), http.StatusConflict)
	evictA()
	if resp := f.publish(a, at(20), at(30), http.StatusOK); !strings.Contains(resp, "gap recorded") {
		t.Fatalf("gap after eviction not recorded: %q", resp)
	}
	evictA()
	f.publish(a, at(30), at(40), http.StatusOK)
	evictA()
	st, err := f.Hub.ChannelState(context.Background(), a.Topic)
	if err != nil {
		t.Fatal(err)
	}
	if st.Published != 3 || len(st.Gaps) != 1 || !st.LastUntil.Equal(hubtest.MustTime(at(40))) {
		t.Fatalf("state after evictions: published %d, gaps %+v, last until %s; want 3, one gap, %s", st.Published, st.Gaps, st.LastUntil, at(40))
	}
	if g := st.Gaps[0]; !g.From.Equal(hubtest.MustTime(at(10))) || !g.Until.Equal(hubtest.MustTime(at(20))) {
		t.Fatalf("gap %s–%s, want %s–%s", g.From, g.Until, at(10), at(20))
	}
}

// Channels not used for ChannelIdle lose their working state even under
// the bound, and pick up where they were when used again.
func TestChannelMemory_IdleChannelsDropped(t *testing.T) {
	f := newFixture(t)
	chs := f.openChannels(5)
	for _, ch := range chs {
		f.publish(ch, at(0), at(10), http.StatusOK)
	}
	f.settle("flushed", func(m hub.ChannelMemory) bool { return m.Dirty == 0 && m.States == len(chs) })
	f.Clock.Advance(hub.ChannelIdle + time.Minute)
	f.settle("idle states dropped", func(m hub.ChannelMemory) bool { return m.States == 0 && m.Definitions == 0 })
	f.publish(chs[0], at(5), at(15), http.StatusConflict)
	f.publish(chs[0], at(10), at(20), http.StatusOK)
}

// Deleting a channel forgets its working state at once.
func TestChannelMemory_DeleteChannelForgets(t *testing.T) {
	f := newFixture(t)
	ch := f.openChannels(1)[0]
	f.publish(ch, at(0), at(10), http.StatusOK)
	if m := f.Hub.ChannelMemory(); m.States != 1 {
		t.Fatalf("%+v before the delete, want one state", m)
	}
	if err := f.Hub.DeleteChannel(context.Background(), ch); err != nil {
		t.Fatal(err)
	}
	if m := f.Hub.ChannelMemory(); m.States != 0 || m.Definitions != 0 || m.Dirty != 0 {
		t.Fatalf("%+v after the delete, want nothing", m)
	}
}

// Verified topics beyond MaxChannelStates are forgotten, and a forgotten
// one is checked again (one more HEAD) at its channel's next publish.
func TestChannelMemory_TopicChecksBounded(t *testing.T) {
	const limit, channels = 4, 12
	f := newFixture(t, withMaxStates(limit))
	var heads atomic.Int64
	topicSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			heads.Add(1)
		}
		self := "http://" + r.Host + r.URL.Path
		w.Header().Add("Link", "<"+self+`>; rel="self"`)
		w.Header().Add("Link", "<"+f.URL+`>; rel="hub"`)
	}))
	t.Cleanup(topicSrv.Close)
	chs := make([]hub.Channel, channels)
	for i := range chs {
		chs[i] = f.Channel(hub.Channel{Topic: fmt.Sprintf("%s/verified/%d/", topicSrv.URL, i), Trust: hub.TrustVerifiedTopic})
		f.publish(chs[i], at(0), at(10), http.StatusOK)
	}
	if n := heads.Load(); n != channels {
		t.Fatalf("%d topic checks for %d channels", n, channels)
	}
	f.settle("topic checks", func(m hub.ChannelMemory) bool { return m.TopicChecks <= limit })
	for _, ch := range chs {
		f.publish(ch, at(10), at(20), http.StatusOK)
	}
	if n := heads.Load(); n <= channels {
		t.Fatalf("%d topic checks after the second round: forgotten topics were not checked again", n)
	}
}
