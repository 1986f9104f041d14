package backoff

import (
	"context"
	"errors"
	"testing"
)

func TestWait_ReturnsAndIsCancellable(t *testing.T) {
	for attempt := range 4 {
		if err := Wait(context.Background(), attempt); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, 60); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait returned %v", err)
	}
}
