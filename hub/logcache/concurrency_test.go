package logcache_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/logcache"
	"github.com/rshub/rshub/internal/testenv"
)

// follow reads every record of channel after cursor in order until it has
// n of them, waiting on Changed when caught up.
func follow(ctx context.Context, l hub.Log, channel string, cursor uint64, n int) ([]uint64, error) {
	var got []uint64
	for len(got) < n {
		changed := l.Changed()
		rec, err := l.Next(ctx, channel, cursor+1)
		if errors.Is(err, hub.ErrNotFound) {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return got, ctx.Err()
			}
		}
		if err != nil {
			return got, err
		}
		got = append(got, rec.Seq)
		cursor = rec.Seq
	}
	return got, nil
}

// TestConcurrency_EveryReaderSeesEveryRecordOnceInOrder appends through
// the real JetStream log from several writers while 50 readers follow the
// cache, some of them slower than the ring is long so that they read from
// the log as well.
func TestConcurrency_EveryReaderSeesEveryRecordOnceInOrder(t *testing.T) {
	const (
		writers   = 4
		perWriter = 125
		readers   = 50
	)
	_, nc := testenv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jl, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer jl.Close()
	c := logcache.New(jl, logcache.Config{MaxRecords: 64})
	start(t, c)
	_, base, err := jl.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}

	channels := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	results := make([][]uint64, readers)
	errs := make([]error, readers)
	for i := range readers {
		wg.Go(func() {
			results[i], errs[i] = follow(ctx, c, "", base, writers*perWriter)
		})
	}
	perChannel := map[string][]uint64{}
	var chanWG sync.WaitGroup
	var chanMu sync.Mutex
	for _, ch := range channels {
		chanWG.Go(func() {
			got, err := follow(ctx, c, ch, base, writers*perWriter/len(channels)+1)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("channel reader %s: %v", ch, err)
			}
			chanMu.Lock()
			perChannel[ch] = got
			chanMu.Unlock()
		})
	}

	var appendMu sync.Mutex
	var appended []uint64
	appendedBy := map[string][]uint64{}
	var wwg sync.WaitGroup
	for w := range writers {
		wwg.Go(func() {
			for i := range perWriter {
				ch := channels[(w+i)%len(channels)]
				seq, dup, err := c.Append(ctx, rec(ch, w*perWriter+i))
				if err != nil || dup {
					t.Errorf("append: %d %v %v", seq, dup, err)
					return
				}
				appendMu.Lock()
				appended = append(appended, seq)
				appendedBy[ch] = append(appendedBy[ch], seq)
				appendMu.Unlock()
				if i%10 == 0 {
					time.Sleep(time.Millisecond) // pacing, not synchronisation: lets readers fall in and out of the ring
				}
			}
		})
	}
	wwg.Wait()
	wg.Wait()
	slices.Sort(appended)
	for i := range readers {
		if errs[i] != nil {
			t.Fatalf("reader %d: %v after %d records", i, errs[i], len(results[i]))
		}
		if !slices.Equal(results[i], appended) {
			t.Fatalf("reader %d read %d records, want the %d appended in order (first diff near %v)",
				i, len(results[i]), len(appended), firstDiff(results[i], appended))
		}
	}
	// Channel readers asked for one record more than their channel holds:
	// let them block, then stop them and compare what they read.
	cancel()
	chanWG.Wait()
	for _, ch := range channels {
		want := appendedBy[ch]
		slices.Sort(want)
		if !slices.Equal(perChannel[ch], want) {
			t.Errorf("channel %s reader read %d records, want %d in order", ch, len(perChannel[ch]), len(want))
		}
	}
	st := c.Stats()
	t.Logf("cache: %+v", st)
	if st.Hits == 0 || st.Delegated == 0 {
		t.Errorf("want both hits and delegations in this test, got %+v", st)
	}
}

func firstDiff(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
