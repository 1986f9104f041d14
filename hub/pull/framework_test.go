package pull_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/pull"
	"github.com/rshub/rshub/wire"
)

// frameworkRecords returns the records of channel name's framework
// channel, each checked against what the Framework Notification rules ask
// of every entry (checkFrameworkEntries): every test of the hub's framework
// notifications checks the whole class.
func frameworkRecords(t *testing.T, l hub.Log, name string) []wire.Record {
	t.Helper()
	var out []wire.Record
	for seq := uint64(1); ; {
		rec, err := l.Next(context.Background(), name+"-framework", seq)
		if errors.Is(err, hub.ErrNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		checkFrameworkEntries(t, rec)
		out = append(out, rec)
		seq = rec.Seq + 1
	}
}

// checkFrameworkEntries checks that every entry of a framework
// notification the hub made has a loc, a change and a capability (RSF-3,
// MUST) and a datetime: RSF-3 makes it optional, but it is the time of the
// change, which the hub always knows (or bounds), so a destination can
// order and date every change.
func checkFrameworkEntries(t *testing.T, rec wire.Record) {
	t.Helper()
	doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Strict})
	if err != nil {
		t.Fatalf("%s %d: %v\n%s", rec.Channel, rec.Seq, err, rec.Body)
	}
	for i, en := range doc.Entries {
		if en.Loc == "" || en.MD == nil || en.MD.Change == "" || en.MD.Capability == "" || en.MD.DateTime.IsZero() {
			t.Errorf("%s %d: entry %d lacks loc, change, capability or datetime:\n%s", rec.Channel, rec.Seq, i, rec.Body)
		}
	}
}

// Every rotation is announced once on the channel's framework channel, in
// a payload that validates strictly as a framework notification (RSF-2 …
// RSF-6), whatever number of processes read the log and across restarts.
func TestFramework_RotationAnnouncedOnceAcrossRestarts(t *testing.T) {
	cfg := pull.Config{Rotation: changefeed.Rotation{MaxEntries: 4}}
	e := newEnv(t, cfg, "a")
	e.pull.EnableFramework(e.intake())
	ctx := context.Background()
	at := t0
	publish := func(n int) {
		for range n {
			e.notify("a", at, at.Add(time.Minute), entries(at, at.Add(time.Minute), 2, int(at.Unix())))
			at = at.Add(time.Minute)
		}
	}
	publish(6) // lists of 4 entries: 2 closed, 1 open
	if err := e.pull.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got := frameworkRecords(t, e.log, "a")
	if len(got) != 2 {
		t.Fatalf("%d framework notifications after 2 rotations", len(got))
	}
	for i, rec := range got {
		doc, err := changefeed.Parse(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Strict})
		if err != nil {
			t.Fatalf("notification %d invalid: %v\n%s", i, err, rec.Body)
		}
		if doc.MD.Capability != changefeed.CapFrameworkNotification || rec.Topic != "http://127.0.0.1:1/topics/a-framework" {
			t.Fatalf("notification %d: %s on %s", i, doc.MD.Capability, rec.Topic)
		}
		first := doc.Entries[0]
		if first.MD.Capability != changefeed.CapChangeList || first.MD.Change != changefeed.Updated || first.MD.DateTime.IsZero() {
			t.Errorf("notification %d first entry %+v", i, first.MD)
		}
		for _, en := range doc.Entries {
			if en.MD.Capability == changefeed.CapChangeList && (len(en.Links) != 1 || en.Links[0].Rel != "index") {
				t.Errorf("notification %d: list entry without rel=index: %+v", i, en)
			}
		}
		want := 3 // closed list, archive, new open list
		if i == 0 {
			want = 4 // and the Capability List, which gains the archive
		}
		if len(doc.Entries) != want {
			t.Errorf("notification %d has %d entries, want %d:\n%s", i, len(doc.Entries), want, rec.Body)
		}
	}
	// the Capability List advertises the framework channel (RSF-1)
	cl, _ := e.doc(e.base + "/channels/a/capabilitylist.xml")
	found := false
	for _, en := range cl.Entries {
		found = found || (en.MD.Capability == changefeed.CapFrameworkNotification && en.Loc == "http://127.0.0.1:1/topics/a-framework")
	}
	if !found {
		t.Error("Capability List without the framework channel")
	}

	// a restarted process and a second one read the same log
	var ps []*pull.Pull
	for range 2 {
		p, err := pull.New(e.log, channels{{Name: "a", Topic: "http://example.com/a/change/", Created: t0}}, pull.Config{
			HubURL: "http://127.0.0.1:1/websub", BaseURL: e.base, Rotation: cfg.Rotation,
		})
		if err != nil {
			t.Fatal(err)
		}
		p.EnableFramework(e.intake())
		ps = append(ps, p)
	}
	for _, p := range ps {
		if err := p.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(frameworkRecords(t, e.log, "a")); n != 2 {
		t.Fatalf("after restart: %d framework notifications, want 2", n)
	}
	publish(2) // one more rotation
	done := make(chan error, len(ps))
	for _, p := range ps {
		go func() { done <- p.Sync(ctx) }()
	}
	for range ps {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := e.pull.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(frameworkRecords(t, e.log, "a")); n != 3 {
		t.Fatalf("after one more rotation seen by three processes: %d framework notifications, want 3", n)
	}
}
