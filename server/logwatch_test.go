package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/natsconn"
)

// What the hub's own use of the log says of the log: an answer (also a
// conflict or a record not found), a failure (the log did not answer), or
// nothing (the caller went away, a record refused before any I/O).
func TestLogOutcome_TellsAnswersFromFailures(t *testing.T) {
	live, gone := context.Background(), func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}()
	for name, tc := range map[string]struct {
		ctx  context.Context
		err  error
		want outcome
	}{
		"stored":                 {live, nil, outcomeAnswered},
		"conflict":               {live, fmt.Errorf("jslog: append: %w", hub.ErrConflict), outcomeAnswered},
		"not found":              {live, fmt.Errorf("jslog: next: %w", hub.ErrNotFound), outcomeAnswered},
		"disconnected":           {live, fmt.Errorf("jslog: %w for 2s", natsconn.ErrDisconnected), outcomeFailed},
		"timeout":                {live, fmt.Errorf("jslog: append: %w", context.DeadlineExceeded), outcomeFailed},
		"no responders":          {live, fmt.Errorf("jslog: append: %w", nats.ErrNoResponders), outcomeFailed},
		"no stream response":     {live, jetstream.ErrNoStreamResponse, outcomeFailed},
		"no stream leader (503)": {live, &jetstream.APIError{Code: 503, Description: "JetStream system temporarily unavailable"}, outcomeFailed},
		"bad request (400)":      {live, &jetstream.APIError{Code: 400, Description: "bad request"}, outcomeAnswered},
		"the caller went away":   {gone, fmt.Errorf("jslog: %w", context.Canceled), outcomeNone},
		"refused before I/O":     {live, errors.New("jslog: append: empty channel name"), outcomeNone},
	} {
		if got := logOutcome(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: logOutcome = %d, want %d", name, got, tc.want)
		}
	}
}

// Readiness follows what the hub's own appends and reads found at once,
// both ways, without waiting for a probe: a probe that keeps answering
// (a cached answer) is overruled by a failed append until its next check,
// and a probe that still fails is overruled by a successful append until
// its next check.
func TestHealth_ObservedLogOutcomesTurnReadinessAtOnce(t *testing.T) {
	log := &switchable{}
	h := newHealth([]probe{{logProbe, log.check}}, time.Minute, slog.New(slog.DiscardHandler))
	h.every = time.Hour // no probe round but the first: every turn below is the observation's
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	awaitReady(t, h, 200, "ready")

	h.observe(logProbe, fmt.Errorf("jslog: append: %w", nats.ErrNoResponders))
	if code, body, _ := get(h.serveReady); code != 503 || !strings.Contains(body, "log unreachable") {
		t.Fatalf("readyz right after a failed append = %d %q, want 503 naming the log", code, body)
	}
	h.observe(logProbe, nil)
	if code, body, _ := get(h.serveReady); code != 200 {
		t.Fatalf("readyz right after an append the log took = %d %q, want 200", code, body)
	}
	h.observe(logProbe, nil) // the quick path: nothing to record
	if code, _, _ := get(h.serveReady); code != 200 {
		t.Fatalf("readyz after a second success = %d", code)
	}
	h.observe("no such probe", errors.New("x"))
	if code, _, _ := get(h.serveReady); code != 200 {
		t.Fatalf("an unknown probe's outcome changed readiness: %d", code)
	}
}
