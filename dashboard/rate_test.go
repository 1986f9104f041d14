package dashboard

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for Rate tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestRate_CountsPerSecondOldestFirst(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	r := NewRate(RateConfig{Window: 5 * time.Second, Clock: clk.Now})
	r.Published("a", 10, time.Millisecond)
	clk.Add(time.Second)
	r.Published("a", 10, 0)
	r.Published("b", 10, 0)
	clk.Add(2 * time.Second)
	r.Published("b", 10, 0)

	got := r.Snapshot(0)
	if got.End != 1_000_003 || got.Interval != 1 {
		t.Fatalf("end %d interval %d, want 1000003 and 1", got.End, got.Interval)
	}
	for name, want := range map[string][]uint32{
		"total": {0, 1, 2, 0, 1},
		"a":     {0, 1, 1, 0, 0},
		"b":     {0, 0, 1, 0, 1},
	} {
		s := got.Total
		if name != "total" {
			s = got.Channels[name]
		}
		if !slices.Equal(s, want) {
			t.Errorf("%s = %v, want %v", name, s, want)
		}
	}
}

func TestRate_ForgetsSecondsOutsideTheWindow(t *testing.T) {
	clk := &fakeClock{t: time.Unix(500, 0)}
	r := NewRate(RateConfig{Window: 3 * time.Second, Clock: clk.Now})
	r.Published("a", 1, 0)
	clk.Add(3 * time.Second) // same slot, next lap of the ring
	if got := r.Snapshot(0).Total; !slices.Equal(got, []uint32{0, 0, 0}) {
		t.Fatalf("after a lap: %v, want zeros", got)
	}
	r.Published("a", 1, 0)
	if got := r.Snapshot(0).Total; !slices.Equal(got, []uint32{0, 0, 1}) {
		t.Fatalf("slot reused: %v, want [0 0 1]", got)
	}
}

func TestRate_SnapshotNarrowsTheWindow(t *testing.T) {
	clk := &fakeClock{t: time.Unix(500, 0)}
	r := NewRate(RateConfig{Window: time.Minute, Clock: clk.Now})
	r.Published("a", 1, 0)
	for _, tc := range []struct{ ask, want int }{{10, 10}, {0, 60}, {-1, 60}, {61, 60}} {
		if got := len(r.Snapshot(tc.ask).Total); got != tc.want {
			t.Errorf("Snapshot(%d) has %d counts, want %d", tc.ask, got, tc.want)
		}
	}
}

func TestRate_BoundsTheChannelsCountedOneByOne(t *testing.T) {
	clk := &fakeClock{t: time.Unix(500, 0)}
	r := NewRate(RateConfig{Window: 2 * time.Second, MaxChannels: 2, Clock: clk.Now})
	for _, c := range []string{"a", "b", "c", "a"} {
		r.Published(c, 1, 0)
	}
	got := r.Snapshot(0)
	if len(got.Channels) != 2 || got.Channels["c"] != nil {
		t.Errorf("channels %v, want a and b only", got.Channels)
	}
	if got.Total[1] != 4 {
		t.Errorf("total %v, want 4 in the last second", got.Total)
	}
}

func TestRate_ConcurrentPublishes(t *testing.T) {
	r := NewRate(RateConfig{Window: time.Minute})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 250 {
				r.Published("a", 1, 0)
				_ = r.Snapshot(2)
			}
		})
	}
	wg.Wait()
	var sum uint32
	for _, n := range r.Snapshot(0).Total {
		sum += n
	}
	if sum != 1000 {
		t.Errorf("counted %d publishes, want 1000", sum)
	}
}
