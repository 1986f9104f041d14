package admin

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
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

// deliveries reports the delivery engine's per-subscription health, as a
// list ordered by ID; ?status=failing keeps the failing ones.
func (a *API) deliveries(r *http.Request) (any, error) {
	switch st := r.URL.Query().Get("status"); st {
	case "":
	case StatusFailing:
		return nonNil(a.failing()), nil
	default:
		return nil, badRequest("status %q: only %s filters deliveries", hub.Truncate(st), StatusFailing)
	}
	if a.cfg.Deliveries == nil {
		return []delivery.SubStats{}, nil
	}
	return nonNil(a.cfg.Deliveries.Stats()), nil
}
