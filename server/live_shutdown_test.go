package server_test

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rshub/rshub/server"
	"github.com/rshub/rshub/server/servertest"
	"github.com/rshub/rshub/wire"
)

// When the hub stops, its open WebSocket and Server-Sent Events sessions
// are closed with CloseGoingAway and their resume cursor, and Run returns
// within the shutdown timeout: the live-session engine is started and
// stopped with the others.
func TestShutdown_ClosesLiveSessionsWithTheirCursor(t *testing.T) {
	cfg := servertest.Config(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan server.Started, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, cfg, slog.New(slog.DiscardHandler), func(s server.Started) { ready <- s })
	}()
	var st server.Started
	select {
	case st = <-ready:
	case err := <-done:
		t.Fatalf("hub exited at start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("hub not ready within 60s")
	}
	q := "?" + wire.ParamChannels + "=demo&" + wire.ParamSince + "=0"
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+st.Addr+wire.PathWebSocket+q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_ = ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"type":"live"`) {
		t.Fatalf("first WebSocket frame %s, %v; want live", b, err)
	}
	resp, err := http.Get("http://" + st.Addr + wire.PathEvents + q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)
	live := false
	for !live && events.Scan() {
		live = events.Text() == "event: "+wire.EventLive
	}
	if !live {
		t.Fatalf("events stream without a live event: %v", events.Err())
	}

	cancel()
	_, _, err = ws.ReadMessage()
	var ce *websocket.CloseError
	// the cursor is where the session stood: 0, or past the hub's own
	// framework notification of the new channel when it came first
	if !errors.As(err, &ce) || ce.Code != wire.CloseGoingAway || !regexp.MustCompile(`resume with since=[0-9]+$`).MatchString(ce.Text) {
		t.Fatalf("WebSocket ended with %v, want close %d with the resume cursor", err, wire.CloseGoingAway)
	}
	var last string
	for events.Scan() {
		if line := events.Text(); line != "" {
			last = line
		}
	}
	if want := `"code":1001`; !strings.HasPrefix(last, "data: ") || !strings.Contains(last, `"type":"end"`) || !strings.Contains(last, want) {
		t.Fatalf("events stream ended with %q, want the end event with %s", last, want)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(cfg.ShutdownTimeout + 10*time.Second):
		t.Fatal("Run did not return")
	}
}
