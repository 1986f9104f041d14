package mirror_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// TestRunWebSocket_ResetTakesTheHubsNewCursor starts a mirror whose state
// holds a cursor of another log, far ahead (a hub rebuilt on a fresh data
// directory): the hub answers with a reset, the mirror takes the new
// log's epoch and cursor, and goes on applying live notifications, ending
// equal to the Source; over a WebSocket and over Server-Sent Events.
func TestRunWebSocket_ResetTakesTheHubsNewCursor(t *testing.T) {
	for name, run := range map[string]func(*mirror.Mirror, context.Context, mirror.WebSocketConfig) error{
		"websocket": (*mirror.Mirror).RunWebSocket,
		"sse":       (*mirror.Mirror).RunSSE,
	} {
		t.Run(name, func(t *testing.T) { testResetTakesTheHubsNewCursor(t, run) })
	}
}

func testResetTakesTheHubsNewCursor(t *testing.T, run func(*mirror.Mirror, context.Context, mirror.WebSocketConfig) error) {
	hubURL := startHub(t)
	src := newSource(t, hubURL)
	src.change(t, map[string][]byte{"a.txt": []byte("a1")})
	dir := filepath.Join(t.TempDir(), "mirror")
	statePath := dir + ".state.json"
	topic := hubURL + "topics/demo"
	const oldEpoch = "0123456789abcdef"
	if err := mirror.SaveState(statePath, mirror.State{Topic: topic, Hub: hubURL, Seq: 5000, Epoch: oldEpoch}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var resets []string
	m, err := mirror.Open(mirror.Config{Dir: dir, StatePath: statePath, Hub: hubURL, Topic: topic, BaseURL: src.srv.URL + "/files/",
		Events: func(e mirror.Event) {
			if e.Kind == mirror.EventWarning && strings.Contains(e.Message, "reset") {
				mu.Lock()
				resets = append(resets, e.Message)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(m, ctx, mirror.WebSocketConfig{Hub: hubURL, Channel: "demo"}) }()
	defer func() {
		cancel()
		<-done
	}()
	testenv.Eventually(t, 20*time.Second, func() bool {
		st := m.State()
		return wire.ValidEpoch(st.Epoch) && st.Epoch != oldEpoch && st.Seq < 5000
	}, "the mirror taking the hub's log epoch and cursor")
	last := src.change(t, map[string][]byte{"a.txt": []byte("a2"), "b.txt": []byte("b1")})
	testenv.Eventually(t, 20*time.Second, func() bool { return m.State().Seq >= last.Seq }, "the live notification after the reset applied")
	src.checkMirror(t, dir)
	mu.Lock()
	defer mu.Unlock()
	if len(resets) != 1 {
		t.Fatalf("reset warnings %q; want one", resets)
	}
}
