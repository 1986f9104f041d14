package admin

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// maxScan bounds the subscriptions one page of a filtered walk reads: the
// walk stops at the end of the shard where it passes maxScan and answers
// what it found with a next link, so that a search over 100,000
// subscriptions is a few bounded requests, never one unbounded one.
const maxScan = 5000

// Subscription statuses the status parameter of GET /admin/subscriptions
// selects.
const (
	StatusPending = "pending" // verification of intent not yet done
	StatusActive  = "active"  // verified, lease running
	StatusExpired = "expired" // lease over
	// StatusFailing selects the subscriptions whose webhook deliveries
	// fail, are held back by their host's circuit breaker or stalled, or
	// that hold dead letters, as this hub's delivery engine reports them.
	StatusFailing = "failing"
)

// SubscriptionView is a subscription as the admin API lists it, with its
// secret hidden and, when this hub runs its queue, its delivery health.
type SubscriptionView struct {
	hub.Subscription
	Delivery *delivery.SubStats `json:"delivery,omitempty"`
}

// subQuery is a parsed GET /admin/subscriptions request.
type subQuery struct {
	topic  string
	given  string // topic as the request spelled it, when that is not its normal spelling
	q      string // lower case; matched against ID, callback, topic, channel
	status string
	limit  int
	cur    cursor
	now    time.Time
}

// parseSubQuery reads and checks the list parameters of r.
func parseSubQuery(r *http.Request, now time.Time) (subQuery, error) {
	v := r.URL.Query()
	sq := subQuery{topic: v.Get("topic"), q: strings.ToLower(v.Get("q")), status: v.Get("status"), now: now}
	if len(sq.topic) > hub.MaxTopicLen {
		return sq, badRequest("topic is %d bytes; the limit is %d bytes", len(sq.topic), hub.MaxTopicLen)
	}
	if sq.topic != "" { // stored in its normal spelling (wire.NormalizeURL): found by any
		n, err := wire.NormalizeURL(sq.topic)
		if err != nil {
			return sq, badRequest("topic: %v", err)
		}
		if n != sq.topic {
			sq.given = sq.topic // a subscription stored before topics were normalised has it
		}
		sq.topic = n
	}
	if len(sq.q) > hub.MaxTopicLen {
		return sq, badRequest("q is %d bytes; the limit is %d bytes", len(sq.q), hub.MaxTopicLen)
	}
	switch sq.status {
	case "", StatusPending, StatusActive, StatusExpired, StatusFailing:
	default:
		return sq, badRequest("status %q: one of %s, %s, %s, %s", wire.Clip(sq.status), StatusPending, StatusActive, StatusExpired, StatusFailing)
	}
	var err error
	if sq.limit, err = parseLimit(v.Get("limit")); err != nil {
		return sq, err
	}
	kind := kindShards
	switch {
	case sq.status == StatusFailing:
		kind = kindFailing
	case sq.topic != "":
		kind = kindTopic
	}
	sq.cur, err = parseCursor(v.Get("cursor"), kind)
	return sq, err
}

// status returns the lifecycle status of s at now.
func status(s hub.Subscription, now time.Time) string {
	switch {
	case s.State == hub.SubPending:
		return StatusPending
	case s.State == hub.SubExpired || (!s.Expires.IsZero() && !s.Expires.After(now)):
		return StatusExpired
	}
	return StatusActive
}

// matches reports whether the subscription with these fields passes the
// text search.
func (sq subQuery) matches(id, callback, topic, channel string) bool {
	if sq.q == "" {
		return true
	}
	for _, f := range []string{id, callback, topic, channel} {
		if strings.Contains(strings.ToLower(f), sq.q) {
			return true
		}
	}
	return false
}

// keep reports whether s passes every filter but the failing status.
func (sq subQuery) keep(s hub.Subscription) bool {
	if sq.topic != "" && s.Topic != sq.topic && (sq.given == "" || s.Topic != sq.given) {
		return false
	}
	if sq.status != "" && sq.status != StatusFailing && status(s, sq.now) != sq.status {
		return false
	}
	return sq.matches(s.ID, s.Callback, s.Topic, s.Channel)
}

// listSubs answers a page of subscriptions: a topic's from its index, the
// failing ones from the delivery engine, all of them shard by shard.
func (a *API) listSubs(r *http.Request) (any, error) {
	sq, err := parseSubQuery(r, time.Now())
	if err != nil {
		return nil, err
	}
	var p page[hub.Subscription]
	switch sq.cur.kind {
	case kindFailing:
		p, err = a.failingPage(r.Context(), sq)
	case kindTopic:
		p, err = a.topicPage(r.Context(), sq)
	default:
		p, err = a.shardPage(r.Context(), sq)
	}
	if err != nil {
		return nil, err
	}
	return a.withDeliveries(p), nil
}

// shardPage walks the shards from the cursor on, reading whole shards,
// until the page is full or it has read maxScan subscriptions.
func (a *API) shardPage(ctx context.Context, sq subQuery) (page[hub.Subscription], error) {
	var p page[hub.Subscription]
	scanned := 0
	for shard := sq.cur.shard; shard < hub.Shards; shard++ {
		subs, err := a.cfg.Store.SubscriptionsInShard(ctx, shard)
		if err != nil {
			return p, err
		}
		if shard == sq.cur.shard && sq.cur.after != "" {
			subs = subs[afterID(subs, sq.cur.after, func(s hub.Subscription) string { return s.ID }):]
		}
		for _, s := range subs {
			scanned++
			if !sq.keep(s) {
				continue
			}
			if len(p.items) == sq.limit {
				last := p.items[len(p.items)-1].ID
				p.next = &cursor{kind: kindShards, shard: hub.ShardOf(last), after: last}
				return p, nil
			}
			p.items = append(p.items, s)
		}
		// a full page at a shard's end, or the scan budget spent: the
		// next page starts at the next shard, unread
		if (len(p.items) == sq.limit || scanned >= maxScan) && shard+1 < hub.Shards {
			p.next = &cursor{kind: kindShards, shard: shard + 1}
			return p, nil
		}
	}
	return p, nil
}

// topicPage pages through the subscriptions of one topic.
func (a *API) topicPage(ctx context.Context, sq subQuery) (page[hub.Subscription], error) {
	subs, err := a.cfg.Store.Subscriptions(ctx, sq.topic)
	if err != nil {
		return page[hub.Subscription]{}, err
	}
	if sq.given != "" {
		more, err := a.cfg.Store.Subscriptions(ctx, sq.given)
		if err != nil {
			return page[hub.Subscription]{}, err
		}
		subs = append(subs, more...)
		slices.SortFunc(subs, func(x, y hub.Subscription) int { return strings.Compare(x.ID, y.ID) })
	}
	subs = slices.DeleteFunc(subs[afterID(subs, sq.cur.after, func(s hub.Subscription) string { return s.ID }):], func(s hub.Subscription) bool { return !sq.keep(s) })
	return takePage(subs, sq.limit, func(s hub.Subscription) cursor { return cursor{kind: kindTopic, after: s.ID} }), nil
}

// failingPage pages through the subscriptions the delivery engine reports
// failing, reading from the store only the page's own.
func (a *API) failingPage(ctx context.Context, sq subQuery) (page[hub.Subscription], error) {
	var p page[hub.Subscription]
	failing := a.failing()
	failing = failing[afterID(failing, sq.cur.after, func(s delivery.SubStats) string { return s.ID }):]
	for _, st := range failing {
		if (sq.topic != "" && st.Topic != sq.topic) || !sq.matches(st.ID, st.Callback, st.Topic, st.Channel) {
			continue
		}
		if len(p.items) == sq.limit {
			p.next = &cursor{kind: kindFailing, after: p.items[len(p.items)-1].ID}
			return p, nil
		}
		s, err := a.cfg.Store.Subscription(ctx, st.ID)
		if errors.Is(err, hub.ErrNotFound) {
			continue // ended since its queue reported
		}
		if err != nil {
			return p, err
		}
		p.items = append(p.items, s)
	}
	return p, nil
}

// withDeliveries makes the page's views: secrets hidden, delivery health
// added.
func (a *API) withDeliveries(p page[hub.Subscription]) page[SubscriptionView] {
	out := page[SubscriptionView]{items: make([]SubscriptionView, len(p.items)), next: p.next}
	ids := make([]string, len(p.items))
	for i, s := range p.items {
		out.items[i].Subscription = redactSub(s)
		ids[i] = s.ID
	}
	stats := a.statsOf(ids)
	for i := range out.items {
		if st, ok := stats[ids[i]]; ok {
			out.items[i].Delivery = &st
		}
	}
	return out
}

// afterID returns the index of the first item of list, ordered by the key
// id gives, whose key is greater than after.
func afterID[T any](list []T, after string, id func(T) string) int {
	if after == "" {
		return 0
	}
	i, found := slices.BinarySearchFunc(list, after, func(t T, k string) int { return strings.Compare(id(t), k) })
	if found {
		i++
	}
	return i
}

// takePage returns the first limit items of list as a page, with the
// cursor after its last item when list has more.
func takePage[T any](list []T, limit int, after func(T) cursor) page[T] {
	if len(list) <= limit {
		return page[T]{items: list}
	}
	c := after(list[limit-1])
	return page[T]{items: list[:limit], next: &c}
}
