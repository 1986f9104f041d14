package follow

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/rshub/rshub/hub"
)

// A conditional request saves bandwidth, never content. A Source served
// as static files by a server whose clock has one-second resolution writes
// its lists in the very second the follower reads them, between the reads
// of one poll and between polls, in any interleaving: appends to the open
// list, same-size rewrites of its last change, rotations that close it.
// Whatever the interleaving, once the Source is quiet every change its
// lists hold is published once, in order, with no gap. Before, a list read
// in the second of its last write was answered 304 to the next conditional
// GET: the tail of a list closed in that second was never published, and
// an open list's change waited for the Source's next write.
func TestFollower_EveryChangeWrittenInTheSecondOfAReadIsPublishedOnceInOrder(t *testing.T) {
	for _, kind := range []serverKind{pythonServer, nginxETagOff, nginxDefault} {
		t.Run(kind.String(), func(t *testing.T) {
			for seed := range uint64(120) {
				if !checkInterleaving(t, kind, seed) {
					return // one counterexample is enough to read
				}
			}
		})
	}
}

// checkInterleaving runs one random interleaving of the Source's writes
// and clock ticks with the follower's reads, then checks what was
// published; it reports whether the check held.
func checkInterleaving(t *testing.T, kind serverKind, seed uint64) bool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(kind)))
	src := newStaticSource(kind)
	srv := httptest.NewServer(src)
	defer srv.Close()
	h := &fakeHub{}
	e, err := New(Config{Hub: h, Store: fakeStore{}, Client: srv.Client(), Logger: slog.New(slog.DiscardHandler), Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	c := newChangeListSource(src, srv.URL, 1+rng.IntN(4))

	// ops is the Source's budget of writes; op makes one step of the
	// Source: a change, a same-size rewrite, a tick of its clock, or
	// nothing. mu orders the Source's steps, made by the test and inside
	// the server's answers.
	var mu sync.Mutex
	ops := 40
	op := func() {
		mu.Lock()
		defer mu.Unlock()
		if ops == 0 {
			return
		}
		ops--
		switch p := rng.Float64(); {
		case p < 0.45:
			c.add()
		case p < 0.6:
			if !c.rewriteLast() {
				c.add()
			}
		case p < 0.85:
			src.tick(1)
		}
	}
	var chance float64 // of a step after each answer
	src.hook = func() {
		mu.Lock()
		p := rng.Float64()
		mu.Unlock()
		if p < chance {
			op()
		}
	}
	f := newFollower(e, hub.Channel{Name: "c", Follow: srv.URL + "/index.xml", PollInterval: "1s", Validation: hub.ValidationStrict})
	ctx := context.Background()
	poll := func() bool {
		if err := f.poll(ctx); err != nil {
			t.Errorf("%s seed %d: poll: %v", kind, seed, err)
			return false
		}
		return true
	}
	for left := true; left; {
		mu.Lock()
		chance = rng.Float64() / 2
		steps := rng.IntN(3)
		mu.Unlock()
		for range steps {
			op()
		}
		if !poll() {
			return false
		}
		mu.Lock()
		left = ops > 0
		mu.Unlock()
	}
	// the Source is quiet: a later second, and polls
	mu.Lock()
	chance = 0
	mu.Unlock()
	src.tick(2)
	for range 2 {
		if !poll() {
			return false
		}
	}

	mu.Lock()
	defer mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if msg := checkPublished(h.ids, c.final(), c.written); msg != "" || len(h.gaps) > 0 {
		t.Errorf("%s seed %d (rotating every %d): %s; gaps %v\n published %v\n the lists hold %v", kind, seed, c.rotateEvery, msg, h.gaps, h.ids, c.final())
		return false
	}
	return true
}

// checkPublished checks the changes published against the Source's:
// none twice, none the Source never wrote, and those its lists still hold
// all of them, in their order (a change rewritten before it was read may
// be missing: the Source replaced it). It returns what is wrong, or "".
func checkPublished(published, final, written []string) string {
	seen := map[string]bool{}
	for _, id := range published {
		if seen[id] {
			return fmt.Sprintf("%s published twice", id)
		}
		seen[id] = true
		if !slices.Contains(written, id) {
			return fmt.Sprintf("%s published, never written", id)
		}
	}
	inFinal := map[string]bool{}
	for _, id := range final {
		inFinal[id] = true
	}
	var got []string
	for _, id := range published {
		if inFinal[id] {
			got = append(got, id)
		}
	}
	if !slices.Equal(got, final) {
		missing := 0
		for _, id := range final {
			if !seen[id] {
				missing++
			}
		}
		return fmt.Sprintf("%d of the %d changes the lists hold published in order (%d missing)", len(got), len(final), missing)
	}
	return ""
}
