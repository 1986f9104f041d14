package delivery

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/internal/testenv"
)

type countingObserver struct {
	mu       sync.Mutex
	outcomes map[string]int
	lagged   int
}

func (o *countingObserver) Attempted(outcome string, took, sinceReceived time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcomes[outcome]++
	if outcome == "delivered" && sinceReceived > 0 && took > 0 {
		o.lagged++
	}
}

func (o *countingObserver) count(outcome string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.outcomes[outcome]
}

// The observer sees each attempt's outcome: failures, dead letters and
// deliveries with their lag since the hub received the notification.
func TestWebhooks_ObserverSeesEveryOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.channel(topic, "feed")
	r := newReceiver(t, func(n int, _ delivery) int {
		if n <= 2 { // n counts requests from 1
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e.subscribe(topic, r.url("/cb"), "")
	e.publish(topic, "feed", 0, 3)
	obs := &countingObserver{outcomes: map[string]int{}}
	cfg := e.fastConfig()
	cfg.Observer = obs
	e.start(cfg)
	testenv.Eventually(t, wait, func() bool { return obs.count("delivered") == 3 }, "3 deliveries observed")
	if got := obs.count("failed"); got != 2 {
		t.Errorf("failed attempts observed: %d, want 2", got)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.lagged != 3 {
		t.Errorf("deliveries with a lag: %d, want 3", obs.lagged)
	}
}
