package admin

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rshub/rshub/hub"
)

// Summary is the hub's counts at a glance, as GET /admin/summary answers
// them: subscriptions by status, channels, and the health of the webhook
// queues this hub runs.
type Summary struct {
	Subscriptions int            `json:"subscriptions"`
	ByStatus      map[string]int `json:"byStatus"` // pending, active, expired
	// Channels is the number of channels, counted at most
	// channelCountTTL ago.
	Channels int `json:"channels"`
	// Queues is the number of webhook queues this hub runs, ByState their
	// count by delivery state.
	Queues   int            `json:"queues"`
	ByState  map[string]int `json:"byState"`
	Failing  int            `json:"failing"` // as the status=failing filter selects
	Dead     int            `json:"deadLetters"`
	Computed time.Time      `json:"computed"`
}

// shardCount is what the summary keeps of one shard: the version it was
// counted at, its subscriptions by stored state, and the sorted expiry
// times (Unix nanoseconds) of its active ones, so that "expired" counts
// at any time without reading the shard again.
type shardCount struct {
	read     bool
	version  uint64
	pending  int
	expired  int
	expiries []int64 // of active subscriptions with an expiry
	forever  int     // active subscriptions without one
}

// channelCountTTL is how long the summary reuses its count of channels:
// counting reads the store's whole channel list.
const channelCountTTL = 2 * time.Second

// shardCounts caches the summary's per-shard counts. A summary reads the
// store's shard versions (one call) and re-reads only the shards whose
// version changed, so its cost at rest does not grow with the number of
// subscriptions. It also keeps the number of channels for channelCountTTL.
type shardCounts struct {
	mu     sync.Mutex
	shards [hub.Shards]shardCount

	chMu       sync.Mutex
	channels   int
	channelsAt time.Time // zero: never counted
}

// channelCount returns the number of channels, counted at most
// channelCountTTL before now.
func (c *shardCounts) channelCount(ctx context.Context, st Store, now time.Time) (int, error) {
	c.chMu.Lock()
	defer c.chMu.Unlock()
	if !c.channelsAt.IsZero() && now.Sub(c.channelsAt) < channelCountTTL {
		return c.channels, nil
	}
	chs, err := st.Channels(ctx)
	if err != nil {
		return 0, err
	}
	c.channels, c.channelsAt = len(chs), now
	return c.channels, nil
}

// count returns the number of subscriptions by status at now, re-reading
// the shards that changed since the last count.
func (c *shardCounts) count(ctx context.Context, st Store, now time.Time) (map[string]int, error) {
	vers, err := st.ShardVersions(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var due []int
	for n := range hub.Shards {
		if sc := &c.shards[n]; !sc.read || n >= len(vers) || sc.version != vers[n] {
			due = append(due, n)
		}
	}
	err = hub.ListShards(ctx, st, due, func(n int, subs []hub.Subscription) error {
		sc := &c.shards[n]
		*sc = shardCount{read: true, expiries: sc.expiries[:0]}
		if n < len(vers) {
			sc.version = vers[n]
		}
		for _, s := range subs {
			switch {
			case s.State == hub.SubPending:
				sc.pending++
			case s.State == hub.SubExpired:
				sc.expired++
			case s.Expires.IsZero():
				sc.forever++
			default:
				sc.expiries = append(sc.expiries, s.Expires.UnixNano())
			}
		}
		slices.Sort(sc.expiries)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]int{StatusPending: 0, StatusActive: 0, StatusExpired: 0}
	t := now.UnixNano()
	for _, sc := range &c.shards {
		// expired: an expiry at or before now, as status decides
		gone, _ := slices.BinarySearch(sc.expiries, t+1)
		out[StatusPending] += sc.pending
		out[StatusExpired] += sc.expired + gone
		out[StatusActive] += sc.forever + len(sc.expiries) - gone
	}
	return out, nil
}

// summary answers the hub's counts. Subscriptions come from the per-shard
// counts, channels from the store's list (reused for channelCountTTL),
// queues from the delivery engine.
func (a *API) summary(r *http.Request) (any, error) {
	now := time.Now()
	by, err := a.counts.count(r.Context(), a.cfg.Store, now)
	if err != nil {
		return nil, err
	}
	nch, err := a.counts.channelCount(r.Context(), a.cfg.Store, now)
	if err != nil {
		return nil, err
	}
	s := Summary{ByStatus: by, Channels: nch, ByState: map[string]int{}, Computed: now.UTC()}
	for _, n := range by {
		s.Subscriptions += n
	}
	if ix, ok := a.cfg.Deliveries.(DeliveryIndex); ok {
		by, dead := ix.StateCounts()
		for state, n := range by {
			s.ByState[state] = n
			s.Queues += n
		}
		s.Dead = dead
		s.Failing = len(ix.Failing())
	} else if a.cfg.Deliveries != nil {
		for _, st := range a.cfg.Deliveries.Stats() {
			s.Queues++
			s.ByState[st.State]++
			s.Dead += st.DeadLetters
			if isFailing(st) {
				s.Failing++
			}
		}
	}
	return s, nil
}
