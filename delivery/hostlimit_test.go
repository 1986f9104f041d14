package delivery

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestHostLimit_BoundsPerHostOnly(t *testing.T) {
	l := newHostLimit(2, 2, 2, 0) // fixed: floor = ceiling
	ctx := context.Background()
	r1, _ := l.acquire(ctx, "a")
	r2, _ := l.acquire(ctx, "a")
	if n := l.inUse("a"); n != 2 {
		t.Fatalf("inUse = %d", n)
	}
	// Host a is full; host b is not affected.
	rb, err := l.acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	rb.release()
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := l.acquire(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third acquire = %v, want deadline exceeded", err)
	}
	got := make(chan struct{})
	go func() {
		r3, err := l.acquire(ctx, "a")
		if err == nil {
			r3.release()
		}
		close(got)
	}()
	r1.release()
	<-got
	r2.release()
	if n := l.inUse("a") + l.inUse("b"); n != 0 {
		t.Fatalf("%d slots still taken", n)
	}
}
