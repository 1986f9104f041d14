//go:build unix

package delivery

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// memStore is a Store in memory whose claims always hold, so that the
// benchmark's heap figures are the engine's, not a store client's.
type memStore struct {
	mu      sync.Mutex
	subs    map[string]hub.Subscription
	cursors map[string]hub.Cursor
}

func newMemStore() *memStore {
	return &memStore{subs: map[string]hub.Subscription{}, cursors: map[string]hub.Cursor{}}
}

func (s *memStore) put(sub hub.Subscription) {
	s.mu.Lock()
	s.subs[sub.ID] = sub
	s.mu.Unlock()
}

func (s *memStore) SubscriptionsInShard(_ context.Context, shard int) ([]hub.Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var subs []hub.Subscription
	for _, sub := range s.subs {
		if hub.ShardOf(sub.ID) == shard {
			subs = append(subs, sub)
		}
	}
	return subs, nil
}

// ShardVersions never changes: the benchmark activates what it puts.
func (s *memStore) ShardVersions(context.Context) ([]uint64, error) {
	return make([]uint64, hub.Shards), nil
}

func (s *memStore) Heartbeat(_ context.Context, owner string, _ time.Duration) ([]string, error) {
	return []string{owner}, nil
}

func (s *memStore) Subscription(_ context.Context, id string) (hub.Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.subs[id]
	if !ok {
		return hub.Subscription{}, hub.ErrNotFound
	}
	return sub, nil
}

func (s *memStore) DeleteSubscription(context.Context, string) error { return nil }

func (s *memStore) Cursor(_ context.Context, id string) (hub.Cursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cursors[id]
	if !ok {
		return hub.Cursor{}, hub.ErrNotFound
	}
	return c, nil
}

func (s *memStore) PutCursor(_ context.Context, id string, c hub.Cursor) error {
	s.mu.Lock()
	s.cursors[id] = c
	s.mu.Unlock()
	return nil
}

func (s *memStore) AddDeadLetter(context.Context, hub.DeadLetter) error           { return nil }
func (s *memStore) DeadLetters(context.Context, string) ([]hub.DeadLetter, error) { return nil, nil }
func (s *memStore) DeleteDeadLetter(context.Context, string, string) error        { return nil }
func (s *memStore) Claim(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}
func (s *memStore) Release(context.Context, string, string) error { return nil }

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAndStacks returns the live heap and goroutine stack bytes after a
// collection.
func heapAndStacks() (heap, stacks uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// BenchmarkWebhooks_PublishCost measures the CPU time and queue wake-ups
// per publish to a channel with 10 subscribers (loopback callbacks), first
// alone on the hub, then beside 10,000 idle subscriptions on 1,000 other
// channels, and the heap and stack bytes per idle subscription. The CPU
// time is the whole process's: hub, embedded NATS log and receivers.
func BenchmarkWebhooks_PublishCost(b *testing.B) {
	const hot, idleSubs, idleChannels = 10, 10000, 1000
	e := newEnv(b)
	st := newMemStore()
	var got atomic.Int64
	r := newReceiver(b, func(int, delivery) int { got.Add(1); return 204 })
	cfg := e.fastConfig()
	cfg.Reconcile, cfg.ClaimTTL, cfg.CursorFlush = time.Hour, time.Hour, time.Hour
	w := NewWebhooks(e.log, st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	testenv.Eventually(b, wait, func() bool { return len(w.Shards()) == hub.Shards }, "every shard held")

	sub := func(topic, channel, callback string) hub.Subscription {
		now := time.Now()
		return hub.Subscription{
			ID: hub.SubscriptionID(topic, callback), Topic: topic, Channel: channel, Callback: callback,
			Lease: 864000, Expires: now.Add(240 * time.Hour), State: hub.SubActive, Created: now, Verified: now, StartSeq: 1,
		}
	}
	var hotIDs []string
	for i := range hot {
		s := sub("https://hot.example/changes.xml", "hot", r.url(fmt.Sprintf("/hot%d", i)))
		st.put(s)
		w.Activate(s)
		hotIDs = append(hotIDs, s.ID)
	}
	testenv.Eventually(b, wait, func() bool { return idle(w, hotIDs) }, "hot queues caught up")

	publish := func(b *testing.B) {
		var allIDs []string
		w.mu.Lock()
		for id := range w.queues {
			allIDs = append(allIDs, id)
		}
		w.mu.Unlock()
		_, woken0 := wakeCounts(w, allIDs)
		rec := wire.Record{Topic: "https://hot.example/changes.xml", Channel: "hot", ContentType: "application/xml", Body: []byte("<urlset/>")}
		b.ResetTimer()
		cpu0 := cpuTime(b)
		for range b.N {
			want := got.Load() + hot
			if _, _, err := e.log.Append(context.Background(), rec); err != nil {
				b.Fatal(err)
			}
			testenv.Eventually(b, wait, func() bool { return got.Load() >= want })
		}
		cpu := cpuTime(b) - cpu0
		b.StopTimer()
		_, woken := wakeCounts(w, allIDs)
		var wakes uint64
		for i := range woken {
			wakes += woken[i] - woken0[i]
		}
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/publish")
		b.ReportMetric(float64(wakes)/float64(b.N), "wakeups/publish")
	}
	b.Run("10-subscribers", publish)

	idleList := make([]hub.Subscription, 0, idleSubs)
	for i := range idleSubs {
		ch := fmt.Sprintf("idle%d", i%idleChannels)
		s := sub("https://"+ch+".example/changes.xml", ch, fmt.Sprintf("http://127.0.0.1:1/idle%d", i))
		st.put(s)
		idleList = append(idleList, s)
	}
	heap0, stacks0 := heapAndStacks()
	var idleIDs []string
	for _, s := range idleList {
		w.Activate(s)
		idleIDs = append(idleIDs, s.ID)
	}
	testenv.Eventually(b, time.Minute, func() bool { return idle(w, idleIDs) }, "idle queues caught up")
	heap1, stacks1 := heapAndStacks()
	b.Logf("per idle subscription: %d heap bytes, %d stack bytes",
		(int64(heap1)-int64(heap0))/idleSubs, (int64(stacks1)-int64(stacks0))/idleSubs)

	b.Run("10-subscribers+10000-idle", func(b *testing.B) {
		publish(b)
		b.ReportMetric(float64(int64(heap1)-int64(heap0))/idleSubs, "heap-B/idle-sub")
		b.ReportMetric(float64(int64(stacks1)-int64(stacks0))/idleSubs, "stack-B/idle-sub")
	})
}
