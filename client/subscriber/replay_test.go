package subscriber

import (
	"errors"
	"testing"
	"time"
)

func TestReplayCache_RemembersUntilExpiryThenForgets(t *testing.T) {
	c := newReplayCache(10)
	t0 := time.Unix(1_800_000_000, 0)
	k := newReplayKey("sub", "msg_1")
	if err := c.add(k, t0.Add(time.Minute), t0); err != nil {
		t.Fatal(err)
	}
	if err := c.add(k, t0.Add(time.Minute), t0.Add(59*time.Second)); !errors.Is(err, ErrReplayed) {
		t.Fatalf("repeat within the window: %v", err)
	}
	if err := c.add(newReplayKey("other sub", "msg_1"), t0.Add(time.Minute), t0); err != nil {
		t.Fatalf("the same id for another subscription: %v", err)
	}
	if err := c.add(k, t0.Add(3*time.Minute), t0.Add(61*time.Second)); err != nil {
		t.Fatalf("after its window: %v", err)
	}
	c.forget(k)
	if err := c.add(k, t0.Add(3*time.Minute), t0.Add(62*time.Second)); err != nil {
		t.Fatalf("after forget: %v", err)
	}
}

func TestReplayCache_BoundedAndFailsClosedWhenFull(t *testing.T) {
	c := newReplayCache(3)
	t0 := time.Unix(1_800_000_000, 0)
	for i, id := range []string{"a", "b", "c"} {
		if err := c.add(newReplayKey("s", id), t0.Add(time.Duration(i+1)*time.Minute), t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.add(newReplayKey("s", "d"), t0.Add(time.Minute), t0); !errors.Is(err, ErrReplayCacheFull) {
		t.Fatalf("full: %v", err)
	}
	// "a" expires after one minute and makes room; "b" and "c" stay
	if err := c.add(newReplayKey("s", "d"), t0.Add(5*time.Minute), t0.Add(90*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.add(newReplayKey("s", "b"), t0.Add(5*time.Minute), t0.Add(90*time.Second)); !errors.Is(err, ErrReplayed) {
		t.Fatalf("b: %v", err)
	}
	if c.len() != 3 {
		t.Fatalf("%d ids", c.len())
	}
	// forgetting and re-adding many times keeps the heap bounded
	for i := range 100 {
		c.forget(newReplayKey("s", "d"))
		if err := c.add(newReplayKey("s", "d"), t0.Add(time.Duration(10+i)*time.Minute), t0.Add(90*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.order) > 2*c.max+1 {
		t.Fatalf("heap of %d entries", len(c.order))
	}
}

// len returns how many ids are remembered.
func (c *replayCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids)
}
