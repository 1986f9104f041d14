package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/wire"
)

// seedSubscriptions stores active subscriptions [from, to) straight into
// the cluster's Redis through the hub's store (as verified subscriptions
// would be): subscription i is on channel i % len(chans) with callback
// l.url(i), and receives the log from startSeq on. It returns the IDs by
// subscription index.
func seedSubscriptions(ctx context.Context, redisURL string, chans []clusterChannel, l *clusterLog, from, to int, startSeq uint64) ([]string, error) {
	st, err := redisstore.Open(ctx, redisURL, redisstore.Config{})
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	defer st.Close()
	ids := make([]string, to-from)
	now := time.Now().UTC()
	jobs := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				ch := chans[i%len(chans)]
				sub := hub.Subscription{
					ID: hub.SubscriptionID(ch.Topic, l.url(i)), Topic: ch.Topic, Channel: ch.Name, Callback: l.url(i),
					Lease: 864000, Expires: now.Add(864000 * time.Second), State: hub.SubActive,
					Created: now, Verified: now, StartSeq: startSeq,
				}
				ids[i-from] = sub.ID
				if err := st.PutSubscription(ctx, sub); err != nil {
					select {
					case errs <- fmt.Errorf("seed subscription %d: %w", i, err):
					default:
					}
				}
			}
		}()
	}
feed:
	for i := from; i < to; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return ids, ctx.Err()
}

// clusterPub is one notification published in the cluster scenario.
type clusterPub struct {
	ch    int
	acked bool
}

// clusterPublisher publishes fat pings to the scenario's channels through
// one hub, each channel in Source-time order, and remembers every
// notification by id (its index in pubs).
type clusterPublisher struct {
	client *http.Client
	hubURL string
	chans  []clusterChannel

	mu     sync.Mutex
	next   []time.Time // from of each channel's next notification
	pubs   []clusterPub
	maxSeq uint64 // highest log sequence a publish was acknowledged with
}

func newClusterPublisher(hubURL string, chans []clusterChannel) *clusterPublisher {
	p := &clusterPublisher{
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
		hubURL: hubURL, chans: chans, next: make([]time.Time, len(chans)),
	}
	for i := range p.next {
		p.next[i] = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return p
}

// publish sends the next notification of channel ch, retrying the same
// bytes (which the hub deduplicates) a few times; it returns its id.
// Calls for one channel must not overlap.
func (p *clusterPublisher) publish(ctx context.Context, ch int) (int, error) {
	p.mu.Lock()
	id := len(p.pubs)
	p.pubs = append(p.pubs, clusterPub{ch: ch})
	from := p.next[ch]
	p.mu.Unlock()
	body := notification(id, time.Now(), from)
	link := "<" + p.chans[ch].Topic + `>; rel="self", <` + p.hubURL + `>; rel="hub"`
	var last error
	for attempt := range 5 {
		if attempt > 0 {
			t := time.NewTimer(200 * time.Millisecond) // back off before the retry
			select {
			case <-ctx.Done():
				t.Stop()
				return id, ctx.Err()
			case <-t.C:
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.hubURL, bytesReader(body))
		if err != nil {
			return id, fmt.Errorf("publish %d: %w", id, err)
		}
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("Link", link)
		resp, err := p.client.Do(req)
		if err != nil {
			last = err
			continue
		}
		msg := drain(resp)
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("hub answered %d: %s", resp.StatusCode, msg)
			continue
		}
		seq, _ := strconv.ParseUint(resp.Header.Get(wire.HeaderSeq), 10, 64)
		p.mu.Lock()
		p.pubs[id].acked = true
		p.next[ch] = from.Add(time.Second)
		p.maxSeq = max(p.maxSeq, seq)
		p.mu.Unlock()
		return id, nil
	}
	return id, fmt.Errorf("publish %d to %s: %w", id, p.chans[ch].Name, last)
}

// round publishes one notification to each of the first n channels, 8 at
// a time, and returns their ids by channel (-1 for the channels beyond n).
func (p *clusterPublisher) round(ctx context.Context, n int) ([]int, error) {
	ids := make([]int, len(p.chans))
	for i := range ids {
		ids[i] = -1
	}
	jobs := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range jobs {
				id, err := p.publish(ctx, ch)
				ids[ch] = id
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for ch := range n {
		jobs <- ch
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return ids, nil
}

// stream publishes to the channels in turn, one every interval, until
// stop is closed (a publish under way is finished, so that no channel is
// left with a notification of unknown fate) or ctx ends; it returns the
// first publish error.
func (p *clusterPublisher) stream(ctx context.Context, stop <-chan struct{}, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for ch := 0; ; ch = (ch + 1) % len(p.chans) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return nil
		case <-tick.C:
		}
		if _, err := p.publish(ctx, ch); err != nil {
			return err
		}
	}
}

// published returns a copy of every notification published so far.
func (p *clusterPublisher) published() []clusterPub {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]clusterPub(nil), p.pubs...)
}

// lastSeq is the highest log sequence acknowledged so far.
func (p *clusterPublisher) lastSeq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxSeq
}
