package storetest

import (
	"context"
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
	put(a, "https://example.org/1", "")
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 "}) {
		t.Fatalf("listing after a put: %q", got)
	}
	topics(a) // a listing kept unchanged
	put(b, "https://example.org/2", "")
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 ", "https://example.org/2 "}) {
		t.Fatalf("a store does not list a channel the other added: %q", got)
	}
	put(b, "https://example.org/1", "changed")
	if got := topics(a); !slices.Equal(got, []string{"https://example.org/1 changed", "https://example.org/2 "}) {
		t.Fatalf("a store does not list a channel the other changed: %q", got)
	}
	if err := b.DeleteChannel(ctx, "https://example.org/2"); err != nil {
		t.Fatal(err)
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
}
