package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
)

// Shared checks two stores opened on one backend, as two hub processes
// sharing it are: what one writes, the other lists at once, even when it
// keeps its listings between reads.
func Shared(t *testing.T, a, b hub.Store) {
	t.Helper()
	ctx := context.Background()
	topics := func(s hub.Store) []string {
		t.Helper()
		chs, err := s.Channels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ch := range chs {
			out = append(out, ch.Topic+" "+ch.Token)
		}
		return out
	}
	put := func(s hub.Store, topic, token string) {
		t.Helper()
		if err := s.PutChannel(ctx, hub.Channel{Topic: topic, Name: "n", Token: token, Created: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	version := channelsVersion(t, a)
	v0 := version()
	put(a, "https://example.org/1", "")
	v1 := version()
	if v1 == v0 {
		t.Fatalf("channels version %q did not move with a put", v1)
	}
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 "}) {
		t.Fatalf("listing after a put: %q", got)
	}
	topics(a) // a listing kept unchanged
	if v := version(); v != v1 {
		t.Fatalf("channels version moved from %q to %q without a change", v1, v)
	}
	put(b, "https://example.org/2", "")
	if v := version(); v == v1 {
		t.Fatalf("channels version %q did not move with the other store's put", v)
	}
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 ", "https://example.org/2 "}) {
		t.Fatalf("a store does not list a channel the other added: %q", got)
	}
	put(b, "https://example.org/1", "changed")
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 changed", "https://example.org/2 "}) {
		t.Fatalf("a store does not list a channel the other changed: %q", got)
	}
	v2 := version()
	if err := b.DeleteChannel(ctx, "https://example.org/2"); err != nil {
		t.Fatal(err)
	}
	if v := version(); v == v2 {
		t.Fatalf("channels version %q did not move with the other store's delete", v)
	}
	got := topics(a)
	if !slices.Equal(got, []string{"https://example.org/1 changed"}) {
		t.Fatalf("a store lists a channel the other deleted: %q", got)
	}
	chs, _ := a.Channels(ctx)
	chs[0].Topic = "mutated by a caller"
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 changed"}) {
		t.Fatalf("a caller changed the store's listing through its copy: %q", got)
	}
	v3 := version()
	if err := b.TouchChannels(ctx); err != nil {
		t.Fatal(err)
	}
	if v := version(); v == v3 {
		t.Fatalf("channels version %q did not move with the other store's touch", v)
	}
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 changed"}) {
		t.Fatalf("a touch changed the listing: %q", got)
	}
	sharedStateUpdates(t, a, b)
	sharedListedChannels(t, a, b)
	if err := a.PutFollowStatus(ctx, "https://example.org/1", []byte(`{"polls":7}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.FollowStatus(ctx, "https://example.org/1"); err != nil || string(got) != `{"polls":7}` {
		t.Fatalf("a store does not read the follow status the other wrote: %q, %v", got, err)
	}
	sub := hub.SubscriptionID("https://example.org/1", "https://cb.example/")
	if err := a.AddAttempts(ctx, []hub.Attempt{{SubID: sub, Seq: 9, Status: 503, Time: time.Unix(2, 0).UTC()}}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Attempts(ctx, sub); err != nil || len(got) != 1 || got[0].Seq != 9 {
		t.Fatalf("a store does not read the attempt log the other wrote: %v, %v", got, err)
	}
}

// sharedListedChannels checks ListedChannel, the answer from a store's
// listing without I/O, on two stores sharing a backend: it answers only
// for the version the listing was read at, so a channel the other store
// changed or deleted is never answered as it was under the new version.
func sharedListedChannels(t *testing.T, a, b hub.Store) {
	t.Helper()
	ctx := context.Background()
	version := channelsVersion(t, a)
	const topic = "https://example.org/listed"
	listed := func(ver string) string {
		t.Helper()
		ch, ok := a.ListedChannel(ver, topic)
		if !ok {
			return "not listed"
		}
		return ch.Token
	}
	relist := func() {
		t.Helper()
		if _, err := a.Channels(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PutChannel(ctx, hub.Channel{Topic: topic, Name: "listed", Token: "first"}); err != nil {
		t.Fatal(err)
	}
	v1 := version()
	if got := listed(v1); got != "not listed" {
		t.Fatalf("answered %q before a listing of version %q", got, v1)
	}
	relist()
	if got := listed(v1); got != "first" {
		t.Fatalf("listing of version %q answered %q, want first", v1, got)
	}
	if _, ok := a.ListedChannel(v1, "https://example.org/never-put"); ok {
		t.Fatal("a topic missing from the listing was answered")
	}
	if err := b.PutChannel(ctx, hub.Channel{Topic: topic, Name: "listed", Token: "second"}); err != nil {
		t.Fatal(err)
	}
	v2 := version()
	if got := listed(v2); got != "not listed" {
		t.Fatalf("the listing of %q answered %q for version %q, after the other store's put", v1, got, v2)
	}
	relist()
	if got := listed(v2); got != "second" {
		t.Fatalf("listing of version %q answered %q, want second", v2, got)
	}
	if got := listed(v1); got != "not listed" {
		t.Fatalf("answered %q for version %q, once the listing is of %q", got, v1, v2)
	}
	if err := b.DeleteChannel(ctx, topic); err != nil {
		t.Fatal(err)
	}
	v3 := version()
	relist()
	if got := listed(v3); got != "not listed" {
		t.Fatalf("a channel the other store deleted was answered: %q", got)
	}
}

// sharedStateUpdates has two stores take turns incrementing one channel
// state, each update starting from what the store wrote last (a store may
// remember its own writes): none may be lost, and each update sees the
// other store's last one.
func sharedStateUpdates(t *testing.T, a, b hub.Store) {
	t.Helper()
	ctx := context.Background()
	const topic = "https://example.org/shared-state"
	for i := range 6 {
		s := []hub.Store{a, a, b, a, b, b}[i]
		st, err := s.UpdateChannelState(ctx, topic, func(st *hub.ChannelState) error {
			if st.Published != uint64(i) {
				return fmt.Errorf("update %d started from %d", i, st.Published)
			}
			st.Published++
			return nil
		})
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if st.Published != uint64(i+1) {
			t.Fatalf("update %d stored %d", i, st.Published)
		}
	}
}

// channelsVersion returns a reader of s's ChannelsVersion (hubs sharing a
// store depend on it for their channel caches).
func channelsVersion(t *testing.T, s hub.Store) func() string {
	t.Helper()
	return func() string {
		t.Helper()
		v, err := s.ChannelsVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
