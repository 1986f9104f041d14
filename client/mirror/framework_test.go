package mirror_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
)

// latestFramework polls the hosted framework topic until its body (the
// latest framework notification) says a Change List closed after after.
func latestFramework(t *testing.T, topic string, after time.Time) *changefeed.Document {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(topic)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && len(b) > 0 {
			doc, err := changefeed.Parse(strings.NewReader(string(b)), changefeed.Options{Mode: changefeed.Strict})
			if err != nil {
				t.Fatalf("framework topic body does not validate: %v\n%s", err, b)
			}
			if c := mirror.ClosedUntil(doc); c.After(after) {
				return doc
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no framework notification on %s closing a list after %v", topic, after)
	return nil
}

// A mirror that missed notifications hears from the framework channel
// that a Change List closed (the hosted framework topic answers the
// latest framework notification) and heals from the hub's Change Lists up
// to the list's until at once.
func TestFramework_ClosedListHealsTheMirror(t *testing.T) {
	hubURL := startHub(t)
	src := newSource(t, hubURL)
	dir := filepath.Join(t.TempDir(), "mirror")
	var events []mirror.Event
	m, err := mirror.Open(mirror.Config{Dir: dir, Hub: hubURL, Topic: hubURL + "topics/demo", BaseURL: src.srv.URL + "/files/",
		Framework: true, Events: func(e mirror.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first := src.change(t, map[string][]byte{"a.txt": []byte("a1"), "b.txt": []byte("b1")})
	if err := m.Apply(ctx, first); err != nil {
		t.Fatal(err)
	}
	// missed: enough entries to close the first list (3 entries a list)
	src.change(t, map[string][]byte{"a.txt": []byte("a2"), "c.txt": []byte("c1")})
	src.change(t, map[string][]byte{"b.txt": nil})
	src.change(t, map[string][]byte{"d.txt": []byte("d1"), "c.txt": []byte("c2")})
	src.change(t, map[string][]byte{"e.txt": []byte("e1")})

	topic, err := m.FrameworkTopic(ctx)
	if err != nil || topic != hubURL+"topics/demo-framework" {
		t.Fatalf("FrameworkTopic = %q, %v", topic, err)
	}
	doc := latestFramework(t, topic, first.Until)
	closed := mirror.ClosedUntil(doc)
	if !closed.After(first.Until) {
		t.Fatalf("closed list until %v, not after the mirror's %v", closed, first.Until)
	}
	gapsBefore := countKind(events, mirror.EventGap)
	if err := m.Apply(ctx, mirror.UpdateOf(doc, 0, "test")); err != nil {
		t.Fatal(err)
	}
	if st := m.State(); !st.Until.Equal(closed) {
		t.Fatalf("position %v after the framework notification, want the closed list's until %v", st.Until, closed)
	}
	fw, gaps := countKind(events, mirror.EventFramework), countKind(events, mirror.EventGap)-gapsBefore
	if fw != len(doc.Entries) || gaps != 1 {
		t.Fatalf("%d framework events (want %d) and %d gaps (want 1)", fw, len(doc.Entries), gaps)
	}
	// once healed, the same notification changes nothing; the next
	// change notification applies normally and the mirror equals the Source
	if err := m.Apply(ctx, mirror.UpdateOf(doc, 0, "test")); err != nil {
		t.Fatal(err)
	}
	if gaps2 := countKind(events, mirror.EventGap) - gapsBefore; gaps2 != 1 {
		t.Fatalf("%d gaps after a repeat, want 1", gaps2)
	}
	if err := m.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	src.checkMirror(t, dir)
}

func countKind(events []mirror.Event, kind string) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
