package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/wire"
)

// seedWorkers is the number of concurrent store writes while seeding.
const seedWorkers = 32

// seedPlan is the state a hub's data directory is seeded with before the
// hub starts: hosted open channels and active, verified webhook
// subscriptions, spread evenly over them.
type seedPlan struct {
	Origin   string // the hub's future origin, http://127.0.0.1:port
	Channels int
	PerChan  int                // subscriptions per channel
	Callback func(i int) string // callback URL of subscription i (channel i / PerChan)
}

// seedChannelName is the name of seeded channel c.
func seedChannelName(c int) string { return fmt.Sprintf("s%05d", c) }

// topic is the topic URI of seeded channel c, as the hub derives it for a
// hosted channel.
func (p seedPlan) topic(c int) string { return p.Origin + wire.TopicPath(seedChannelName(c)) }

// seedStore writes p into the JetStream KV store of the embedded NATS data
// directory dir, the store a hub opens with that --data-dir, and shuts its
// NATS server down again. Channels are stored as hub.PutChannel stores a
// hosted channel (created a day ago); subscriptions as a verified
// subscribe stores them (state active, starting at the empty log's first
// sequence). This is the state
// a hub restarts with: writing it directly skips only the subscribe forms
// and verification GETs, which cost minutes at 100,000 subscriptions.
func seedStore(ctx context.Context, dir string, p seedPlan) error {
	ns, err := embednats.Start(embednats.Config{DataDir: dir})
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer ns.Shutdown()
	nc, err := ns.Connect()
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer nc.Close()
	st, err := kvstore.Open(ctx, nc, kvstore.Config{})
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	now := time.Now().UTC()
	// The channels were created long before the hub (re)starts: a day is
	// past pull.FrameworkHorizon, so the hub does not announce them as
	// added. (Announcing 10,000 channels as just added, about 20,000
	// framework notifications, is work of its own, not what this
	// measures.)
	created := now.Add(-24 * time.Hour)
	err = parallelN(ctx, seedWorkers, p.Channels*(1+p.PerChan), func(ctx context.Context, k int) error {
		if k < p.Channels {
			name := seedChannelName(k)
			return st.PutChannel(ctx, hub.Channel{
				Topic: p.topic(k), Name: name, Trust: hub.TrustOpen, Hosted: true, Created: created,
				CapabilityList: p.Origin + wire.CapabilityListPath(name),
			})
		}
		i := k - p.Channels
		c := i / p.PerChan
		topic, cb := p.topic(c), p.Callback(i)
		const lease = 864000
		return st.PutSubscription(ctx, hub.Subscription{
			ID: hub.SubscriptionID(topic, cb), Topic: topic, Channel: seedChannelName(c), Callback: cb,
			Lease: lease, Expires: hub.Expiry(now, lease), State: hub.SubActive,
			Created: now, Verified: now, StartSeq: 1,
		})
	})
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	return nil
}

// parallelN calls fn(ctx, k) for k = 0..n-1 on workers goroutines and
// returns the first error, after which the remaining calls are skipped.
func parallelN(ctx context.Context, workers, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				if err := fn(ctx, k); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
	for k := range n {
		if ctx.Err() != nil {
			break
		}
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
