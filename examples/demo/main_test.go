package main

import (
	"context"
	"github.com/rshub/rshub/internal/testenv"
	"strings"
	"testing"
	"time"
)

// What `make run` shows a newcomer: changes published and mirrored, the
// mirror identical at the end, the first sequence number explained, and
// no warning, no failure, no line with an empty part or a zero time.
func TestDemo_EndsIdenticalWithoutNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for about 10 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	out := &testenv.Buffer{}
	if err := run(ctx, out, 500*time.Millisecond); err != nil && ctx.Err() == nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	got := out.String()
	for _, want := range []string{"source   published seq", "mirror     created", "identical: true", "framework notifications announcing the new channel"} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, got)
		}
	}
	// "announced 0;" is a length announced as 0 (a hash may start with 0)
	for _, noise := range []string{"warning", "failed", "announced 0;", "0001-01-01", " 1 entries", "catchup \n", "caughtup \n"} {
		if strings.Contains(got, noise) {
			t.Errorf("the demo's output holds %q:\n%s", noise, got)
		}
	}
}
