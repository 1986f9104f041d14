package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer takes lines from the Source's and the mirror's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// What `make run` shows a newcomer: changes published and mirrored, the
// mirror identical at the end, the first sequence number explained, and
// no warning, no failure, no line with an empty part or a zero time.
func TestDemo_EndsIdenticalWithoutNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for about 10 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	out := &syncBuffer{}
	if err := run(ctx, out, 500*time.Millisecond); err != nil && ctx.Err() == nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	got := out.String()
	for _, want := range []string{"source   published seq", "mirror     created", "identical: true", "framework notifications announcing the new channel"} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
	for _, noise := range []string{"warning", "failed", "announced 0", "0001-01-01", " 1 entries", "catchup \n", "caughtup \n"} {
		if strings.Contains(got, noise) {
			t.Errorf("the demo's output holds %q:\n%s", noise, got)
		}
	}
}
