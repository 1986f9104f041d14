package pull

import (
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// The keys of framework records read in the log, and the additions
// already announced, are forgotten once older than any change still
// announced; removals not announced within FrameworkHorizon are dropped.
func TestFramework_KeySetsBounded(t *testing.T) {
	var fw frameworkState
	now := time.Now()
	for i := range 1000 {
		fw.noteSeenLocked(string(rune('a'+i%26))+time.Duration(i).String(), now.Add(-seenRetention-time.Minute))
	}
	fw.noteSeenLocked("recent", now.Add(-time.Minute))
	fw.added = map[string]time.Time{"old": now.Add(-FrameworkHorizon - time.Minute), "new": now}
	fw.pruneLocked(now)
	if len(fw.seen) != 1 || len(fw.added) != 1 {
		t.Fatalf("after pruning: %d keys, %d additions; want 1 and 1", len(fw.seen), len(fw.added))
	}
	fw.noteSeenLocked("late", now.Add(-seenRetention-time.Minute))
	fw.pruneLocked(now.Add(time.Second)) // at most once a minute
	if len(fw.seen) != 2 {
		t.Fatalf("pruned again within a minute: %d keys", len(fw.seen))
	}

	a, b := hub.Channel{Name: "a"}, hub.Channel{Name: "b"}
	if got := fw.noteListingLocked([]hub.Channel{a, b}, now); len(got) != 0 {
		t.Fatalf("first listing: removals %v", got)
	}
	if got := fw.noteListingLocked([]hub.Channel{a}, now); len(got) != 1 || got[0].ch.Name != "b" {
		t.Fatalf("b gone: removals %v", got)
	}
	if got := fw.noteListingLocked([]hub.Channel{a}, now.Add(FrameworkHorizon+time.Minute)); len(got) != 0 || len(fw.removed) != 0 {
		t.Fatalf("after the horizon: removals %v, pending %d", got, len(fw.removed))
	}
}

// A channel missing from one listing only, back in the next with the same
// Created, is not announced as removed; one back under a new Created (a
// new channel of that name) still is.
func TestFramework_ChannelMissingFromOneListingNotRemoved(t *testing.T) {
	var fw frameworkState
	now := time.Now()
	a, b := hub.Channel{Name: "a", Created: now.Add(-time.Hour)}, hub.Channel{Name: "b", Created: now.Add(-time.Hour)}
	fw.noteListingLocked([]hub.Channel{a, b}, now)
	if got := fw.noteListingLocked([]hub.Channel{a}, now); len(got) != 1 {
		t.Fatalf("b missing: removals %v, want b", got)
	}
	if got := fw.noteListingLocked([]hub.Channel{a, b}, now); len(got) != 0 || len(fw.removed) != 0 {
		t.Fatalf("b back: removals %v, pending %d; want none", got, len(fw.removed))
	}
	fw.noteListingLocked([]hub.Channel{a}, now)
	reborn := hub.Channel{Name: "b", Created: now}
	if got := fw.noteListingLocked([]hub.Channel{a, reborn}, now); len(got) != 1 || !got[0].ch.Created.Equal(b.Created) {
		t.Fatalf("b removed and made again: removals %v, want the old b", got)
	}
}
