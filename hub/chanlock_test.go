package hub

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestKeyedLocks_SerialisePerKeyAndForgetIdleKeys(t *testing.T) {
	var k keyedLocks[string]
	ctx := context.Background()
	var mu sync.Mutex
	inside := map[string]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "topic-" + strconv.Itoa(i%5)
			unlock, err := k.lock(ctx, key)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside[key]++
			if inside[key] != 1 {
				t.Errorf("%s held by %d at once", key, inside[key])
			}
			mu.Unlock()
			mu.Lock()
			inside[key]--
			mu.Unlock()
			unlock()
			unlock() // a second call is harmless
		}()
	}
	wg.Wait()
	if n := k.size(); n != 0 {
		t.Fatalf("%d keys still held after every holder released: the map grows with topics ever seen", n)
	}
}

func TestKeyedLocks_WaitEndsWithTheContext(t *testing.T) {
	var k keyedLocks[string]
	unlock, err := k.lock(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := k.lock(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting on a held key past the deadline: %v, want DeadlineExceeded", err)
	}
	if _, err := k.lock(context.Background(), "b"); err != nil {
		t.Fatalf("another key is independent: %v", err)
	}
	unlock()
	if u, err := k.lock(context.Background(), "a"); err != nil {
		t.Fatalf("after release: %v", err)
	} else {
		u()
	}
	if n := k.size(); n != 1 { // "b" is still held
		t.Fatalf("size = %d, want 1", n)
	}
}
