package admin

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/wire"
)

// DeliveryIndex is what a delivery engine may offer beyond [Deliveries]
// so that the admin API reads the health of one page of subscriptions, and
// the failing ones, without walking every queue it runs. When the
// configured Deliveries implements it the API uses it; otherwise it walks
// Stats once per request, which costs time in the number of queues.
type DeliveryIndex interface {
	// Stat returns the delivery health of the subscription id, when this
	// engine runs its queue.
	Stat(id string) (delivery.SubStats, bool)
	// Failing returns the delivery health of the subscriptions whose
	// queue is failing, held back by an open circuit breaker or stalled,
	// or holds dead letters, ordered by ID.
	Failing() []delivery.SubStats
	// StateCounts returns the number of queues in each delivery state and
	// the dead letters they hold, kept as queues change.
	StateCounts() (byState map[string]int, deadLetters int)
	// StatsPage returns the delivery health of at most limit of the
	// queues with the smallest IDs greater than after, ordered by ID, and
	// whether more follow.
	StatsPage(after string, limit int) (page []delivery.SubStats, more bool)
}

// DeliveryHosts is what a delivery engine may offer beyond [Deliveries]:
// the adaptive concurrency of each callback host, for GET
// /admin/deliveries/hosts. *delivery.Webhooks implements it.
type DeliveryHosts interface {
	Hosts() []delivery.HostStats
}

// deliveryHosts answers the concurrency of each callback host the engine
// delivered to recently, ordered by host; none without an engine that
// reports it.
func (a *API) deliveryHosts(*http.Request) (any, error) {
	out := []delivery.HostStats{}
	if h, ok := a.cfg.Deliveries.(DeliveryHosts); ok {
		out = append(out, h.Hosts()...)
	}
	return out, nil
}

// isFailing reports whether st is one the failing status selects.
func isFailing(st delivery.SubStats) bool {
	switch st.State {
	case delivery.StateFailing, delivery.StateCircuitOpen, delivery.StateStalled:
		return true
	}
	return st.DeadLetters > 0
}

// statsOf returns the delivery health of those of ids whose queue this
// hub runs, by ID.
func (a *API) statsOf(ids []string) map[string]delivery.SubStats {
	out := make(map[string]delivery.SubStats, len(ids))
	if a.cfg.Deliveries == nil || len(ids) == 0 {
		return out
	}
	if ix, ok := a.cfg.Deliveries.(DeliveryIndex); ok {
		for _, id := range ids {
			if st, ok := ix.Stat(id); ok {
				out[id] = st
			}
		}
		return out
	}
	all := a.cfg.Deliveries.Stats() // ordered by ID
	for _, id := range ids {
		if i, found := slices.BinarySearchFunc(all, id, func(s delivery.SubStats, id string) int { return strings.Compare(s.ID, id) }); found {
			out[id] = all[i]
		}
	}
	return out
}

// failing returns the delivery health of the failing subscriptions,
// ordered by ID.
func (a *API) failing() []delivery.SubStats {
	if a.cfg.Deliveries == nil {
		return nil
	}
	if ix, ok := a.cfg.Deliveries.(DeliveryIndex); ok {
		return ix.Failing()
	}
	var out []delivery.SubStats
	for _, st := range a.cfg.Deliveries.Stats() {
		if isFailing(st) {
			out = append(out, st)
		}
	}
	return out
}

// deliveries answers a page of the delivery engine's per-subscription
// health, ordered by ID; ?status=failing pages through the failing ones.
func (a *API) deliveries(r *http.Request) (any, error) {
	q := r.URL.Query()
	limit, err := parseLimit(q.Get("limit"))
	if err != nil {
		return nil, err
	}
	kind := kindDeliveries
	switch st := q.Get("status"); st {
	case "":
	case StatusFailing:
		kind = kindFailing
	default:
		return nil, badRequest("status %q: only %s filters deliveries", wire.Clip(st), StatusFailing)
	}
	cur, err := parseCursor(q.Get("cursor"), kind)
	if err != nil {
		return nil, err
	}
	next := func(s delivery.SubStats) cursor { return cursor{kind: kind, after: s.ID} }
	switch {
	case a.cfg.Deliveries == nil:
		return page[delivery.SubStats]{}, nil
	case kind == kindFailing:
		failing := a.failing()
		return takePage(failing[afterID(failing, cur.after, func(s delivery.SubStats) string { return s.ID }):], limit, next), nil
	}
	if ix, ok := a.cfg.Deliveries.(DeliveryIndex); ok {
		items, more := ix.StatsPage(cur.after, limit)
		p := page[delivery.SubStats]{items: items}
		if more && len(items) > 0 {
			c := next(items[len(items)-1])
			p.next = &c
		}
		return p, nil
	}
	all := a.cfg.Deliveries.Stats()
	return takePage(all[afterID(all, cur.after, func(s delivery.SubStats) string { return s.ID }):], limit, next), nil
}
