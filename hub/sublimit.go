package hub

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rshub/rshub/wire"
)

// Subscription limits of a public hub (Config.OpenTopics): anyone may
// subscribe any callback to any topic there, so the subscriptions the
// store holds are bounded in all (MaxSubscriptions, answered 503) and per
// callback host (MaxSubscriptionsPerHost, answered 429). A renewal of a
// subscription the store holds is never refused. The counts are the
// store's, listed at most every openCountTTL (other hubs subscribe too)
// and raised by each request admitted meanwhile; a request admitted whose
// verification then fails holds its place until the next listing. Hubs
// sharing a store count apart between listings, so together they may
// overshoot a limit by what the others admitted within openCountTTL: the
// limits bound abuse, they are not quotas to the unit.

// SubscriptionLimitStats is what the subscription limits have counted, for
// metrics.
type SubscriptionLimitStats struct {
	// Counted is how many subscriptions the store held at the last count,
	// plus those admitted since.
	Counted int
	// RefusedHub and RefusedHost count the subscribe requests refused by
	// MaxSubscriptions and by MaxSubscriptionsPerHost.
	RefusedHub, RefusedHost uint64
}

// subLimits is the subscription counts of the store.
type subLimits struct {
	mu      sync.Mutex
	total   int
	perHost map[string]int
	counted time.Time

	refusedHub, refusedHost atomic.Uint64
}

// SubscriptionLimitStats returns the counts of the subscription limits;
// all zero when the hub does not run with OpenTopics.
func (h *Hub) SubscriptionLimitStats() SubscriptionLimitStats {
	l := &h.subLimits
	l.mu.Lock()
	n := l.total
	l.mu.Unlock()
	return SubscriptionLimitStats{Counted: n, RefusedHub: l.refusedHub.Load(), RefusedHost: l.refusedHost.Load()}
}

// admitSubscription refuses a new subscription beyond the limits (a
// *PublishError) and otherwise counts it; an error of the store is
// returned as unavailable.
func (h *Hub) admitSubscription(ctx context.Context, req subscriptionRequest) error {
	if !h.cfg.OpenTopics || req.Mode != "subscribe" {
		return nil
	}
	if _, err := h.cfg.Store.Subscription(ctx, SubscriptionID(req.Topic, req.Callback)); err == nil {
		return nil // a renewal
	} else if !errors.Is(err, ErrNotFound) {
		return unavailable("the state store", err)
	}
	host := callbackHost(req.Callback)
	l := &h.subLimits
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := h.cfg.Now(); l.counted.IsZero() || now.Sub(l.counted) >= openCountTTL {
		subs, err := h.cfg.Store.Subscriptions(ctx, "")
		if err != nil {
			return unavailable("the state store", fmt.Errorf("count subscriptions: %w", err))
		}
		l.total, l.perHost, l.counted = len(subs), make(map[string]int), now
		for _, s := range subs {
			l.perHost[callbackHost(s.Callback)]++
		}
	}
	if l.total >= h.cfg.MaxSubscriptions {
		l.refusedHub.Add(1)
		return refuse(ReasonSubscriptionLimit, "this hub holds %d subscriptions, its limit (--max-subscriptions); try later or another hub", l.total)
	}
	if n := l.perHost[host]; n >= h.cfg.MaxSubscriptionsPerHost {
		l.refusedHost.Add(1)
		return refuse(ReasonSubHostLimit, "callback host %s has %d subscriptions on this hub, the limit per callback host (--max-subscriptions-per-host); unsubscribe some first", wire.Clip(host), n)
	}
	l.total++
	l.perHost[host]++
	return nil
}

// callbackHost is the host a callback's subscriptions are counted under:
// its host name in lower case, without a trailing dot.
func callbackHost(callback string) string {
	u, err := url.Parse(callback)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}
