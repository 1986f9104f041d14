package pull_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/internal/testenv"
)

// Channels added within FrameworkHorizon are announced on the framework
// channels once (the new channel's Capability List created on its own,
// the Source Description updated on every one that existed then), each payload strictly
// valid, whatever number of processes read the log and across restarts;
// older channels are history.
func TestFramework_ChannelAdditionsAnnouncedOnce(t *testing.T) {
	e := newEnv(t, pull.Config{}, "old")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	chs := channels{
		{Name: "a", Topic: "http://example.com/a/change/", Created: now.Add(-time.Minute)},
		{Name: "b", Topic: "http://example.com/b/change/", Created: now},
		{Name: "old", Topic: "http://example.com/old/change/", Created: t0},
	}
	// the processes run two minutes on: every batch of additions is due
	clock := &testenv.Clock{}
	clock.Advance(2 * time.Minute)
	for range 3 { // a first process, a restarted one and a second one
		p, err := pull.New(e.log, chs, pull.Config{HubURL: "http://127.0.0.1:1/websub", BaseURL: e.base})
		if err != nil {
			t.Fatal(err)
		}
		pull.SetClock(p, clock.Now)
		p.EnableFramework(e.intake(chs...))
		if err := p.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// records, Capability Lists created: b did not exist when a was added
	want := map[string][2]int{"a": {2, 1}, "b": {1, 1}, "old": {2, 0}}
	for name, w := range want {
		recs := frameworkRecords(t, e.log, name)
		created := 0
		for _, rec := range recs {
			doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Strict})
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, rec.Body)
			}
			if doc.MD.Capability != changefeed.CapFrameworkNotification || rec.Topic != hub.FrameworkTopic("http://127.0.0.1:1/websub", name) {
				t.Fatalf("%s: capability %q topic %q", name, doc.MD.Capability, rec.Topic)
			}
			for _, en := range doc.Entries {
				if en.MD.Capability == changefeed.CapCapabilityList && en.MD.Change == changefeed.Created {
					created++
				}
			}
		}
		if len(recs) != w[0] || created != w[1] {
			t.Errorf("%s: %d framework notifications, %d Capability Lists created; want %d and %d", name, len(recs), created, w[0], w[1])
		}
	}
}

// set replaces the channels.
func (m *mutableChannels) set(list ...hub.Channel) {
	m.mu.Lock()
	m.chans = list
	m.mu.Unlock()
}

// fwChanges returns the (capability, change, loc) of every entry of the
// framework records of channel name, each record validated strictly.
func fwChanges(t *testing.T, l hub.Log, name string) (records int, changes []string) {
	t.Helper()
	recs := frameworkRecords(t, l, name)
	for _, rec := range recs {
		doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Strict})
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, rec.Body)
		}
		if doc.MD.Capability != changefeed.CapFrameworkNotification || rec.Topic != hub.FrameworkTopic(hubURL, name) {
			t.Fatalf("%s: capability %q topic %q", name, doc.MD.Capability, rec.Topic)
		}
		for _, en := range doc.Entries {
			changes = append(changes, fmt.Sprintf("%s %s %s", en.MD.Capability, en.MD.Change, en.Loc))
		}
	}
	return len(recs), changes
}

// A channel added is announced once per framework channel, and a channel
// removed once on every remaining one (its Capability List deleted, the
// Source Description updated), when two hub processes read the log at
// the same time; neither they nor a restarted process repeat anything.
func TestFramework_ChannelAddedAndRemovedTwoProcesses(t *testing.T) {
	e := newEnv(t, pull.Config{})
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	a := hub.Channel{Name: "a", Topic: "http://example.com/a/change/", Created: now.Add(-2 * time.Minute)}
	b := hub.Channel{Name: "b", Topic: "http://example.com/b/change/", Created: now.Add(-time.Minute)}
	c := hub.Channel{Name: "c", Topic: "http://example.com/c/change/", Created: now}
	lister := &mutableChannels{}
	lister.set(a, b, c)
	clock := &testenv.Clock{}
	clock.Advance(2 * time.Minute) // every batch of additions due
	process := func() *pull.Pull {
		p, err := pull.New(e.log, lister, pull.Config{HubURL: hubURL, BaseURL: e.base})
		if err != nil {
			t.Fatal(err)
		}
		pull.SetClock(p, clock.Now)
		p.EnableFramework(e.intake(a, b, c))
		return p
	}
	syncAll := func(ps ...*pull.Pull) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(ps))
		for i, p := range ps {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = p.Sync(ctx) }()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	p1, p2 := process(), process()
	syncAll(p1, p2)
	desc := e.base + "/.well-known/resourcesync"
	added := map[string]int{"a": 3, "b": 2, "c": 1} // one per channel added since it exists
	for name, want := range added {
		n, changes := fwChanges(t, e.log, name)
		if n != want {
			t.Errorf("%s: %d framework notifications after the additions, want %d: %q", name, n, want, changes)
		}
		created := 0
		for _, ch := range changes {
			if ch == "capabilitylist created "+e.base+"/channels/"+name+"/capabilitylist.xml" {
				created++
			}
		}
		if created != 1 {
			t.Errorf("%s: its Capability List created %d times, want 1: %q", name, created, changes)
		}
	}

	lister.set(a, b)
	clock.Advance(pull.ChannelsTTL) // the listings are taken again
	syncAll(p1, p2)                 // the removal noticed; its batch is not due yet
	for _, name := range []string{"a", "b"} {
		if n, _ := fwChanges(t, e.log, name); n != added[name] {
			t.Errorf("%s: %d framework notifications before the removal's batch is due, want %d", name, n, added[name])
		}
	}
	clock.Advance(pull.DescriptionBatch + 10*time.Second)
	syncAll(p1, p2)
	syncAll(p1, p2, process()) // again, and a restarted process
	for _, name := range []string{"a", "b"} {
		n, changes := fwChanges(t, e.log, name)
		want := []string{
			"capabilitylist deleted " + e.base + "/channels/c/capabilitylist.xml",
			"description updated " + desc,
		}
		if n != added[name]+1 || fmt.Sprint(changes[len(changes)-2:]) != fmt.Sprint(want) {
			t.Errorf("%s: %d framework notifications after the removal, want %d ending with %q: %q", name, n, added[name]+1, want, changes)
		}
	}
	if n, _ := fwChanges(t, e.log, "c"); n != 1 {
		t.Errorf("c: %d framework notifications, want its 1 from before its removal", n)
	}
}

// Channels added in a burst are announced in batches: each on its own
// framework channel, and one Source Description update per window on the
// others, not one per channel on every framework channel; none of them
// before its window has passed.
func TestFramework_BurstOfAdditionsBatched(t *testing.T) {
	e := newEnv(t, pull.Config{})
	ctx := context.Background()
	window := time.Now().UTC().Truncate(pull.DescriptionBatch)
	const n = 200
	var chs channels
	for i := range n {
		chs = append(chs, hub.Channel{Name: fmt.Sprintf("c%03d", i), Topic: fmt.Sprintf("http://example.com/%d/change/", i),
			Created: window.Add(time.Duration(i) * pull.DescriptionBatch / n)})
	}
	clock := &testenv.Clock{}
	p, err := pull.New(e.log, chs, pull.Config{HubURL: hubURL, BaseURL: e.base})
	if err != nil {
		t.Fatal(err)
	}
	pull.SetClock(p, clock.Now)
	p.EnableFramework(e.intake(chs...))
	count := func() (records int, created map[string]int) {
		created = map[string]int{}
		for _, ch := range chs {
			recs, changes := fwChanges(t, e.log, ch.Name)
			records += recs
			for _, c := range changes {
				if strings.HasPrefix(c, "capabilitylist created") {
					created[ch.Name]++
				}
			}
		}
		return records, created
	}
	clock.Advance(time.Until(window) + pull.DescriptionBatch/2) // inside the window
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if recs, created := count(); recs != len(created) || len(created) > n {
		t.Fatalf("inside the window: %d records for %d channels' own additions; want only those", recs, len(created))
	}
	clock.Advance(pull.DescriptionBatch + 10*time.Second)
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	recs, created := count()
	if len(created) != n {
		t.Fatalf("%d channels announced their Capability List created, want %d", len(created), n)
	}
	for name, k := range created {
		if k != 1 {
			t.Errorf("%s: Capability List created %d times", name, k)
		}
	}
	// n own notifications, and one batch update on each channel but the last added
	if recs != 2*n-1 {
		t.Errorf("%d framework notifications for %d channels added in one window, want %d (one per channel pair before: %d)", recs, n, 2*n-1, n*(n+1)/2)
	}
}
