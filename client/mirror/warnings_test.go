package mirror_test

import (
	"context"
	"github.com/rshub/rshub/internal/testenv"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/client/mirror"
)

// A failure the mirror retries is reported once, through one channel: as a
// warning event when someone takes events (it was also logged, so the
// subscriber printed each warning twice), in the log otherwise.
func TestRetry_WarnsThroughOneChannel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing answers there now
	for _, withEvents := range []bool{true, false} {
		logs := &testenv.Buffer{}
		var mu sync.Mutex
		var warnings []mirror.Event
		cfg := mirror.Config{Dir: t.TempDir(), Hub: dead, Topic: dead + "topics/x", HubCapabilityList: dead + "channels/x/capabilitylist.xml",
			Logger: slog.New(slog.NewTextHandler(logs, nil))}
		if withEvents {
			cfg.Events = func(e mirror.Event) {
				if e.Kind == mirror.EventWarning {
					mu.Lock()
					warnings = append(warnings, e)
					mu.Unlock()
				}
			}
		}
		m, err := mirror.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.RunWebSocket(ctx, mirror.WebSocketConfig{Hub: dead, Channel: "x"}) }()
		reported := func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(warnings) > 0 || strings.Contains(logs.String(), "level=WARN")
		}
		deadline := time.Now().Add(10 * time.Second)
		for !reported() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // polling, bounded by the deadline
		}
		cancel()
		<-done
		mu.Lock()
		n := len(warnings)
		mu.Unlock()
		switch {
		case withEvents && (n == 0 || strings.Contains(logs.String(), "level=WARN")):
			t.Errorf("with events: %d warning events, log:\n%s\nwant the warning as an event only", n, logs)
		case !withEvents && !strings.Contains(logs.String(), "failed, retrying"):
			t.Errorf("without events: log:\n%s\nwant the warning logged", logs)
		}
	}
}
