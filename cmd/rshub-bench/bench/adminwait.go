package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// countActiveQueues returns the number of delivery queues in state
// active that GET /admin/summary of the hub at hubURL reports.
func countActiveQueues(ctx context.Context, client *http.Client, hubURL, adminToken string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hubURL+"admin/summary", nil)
	if err != nil {
		return 0, fmt.Errorf("admin summary: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("admin summary: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("admin summary: status %d: %s", resp.StatusCode, drain(resp))
	}
	var sum struct {
		ByState map[string]int `json:"byState"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
		return 0, fmt.Errorf("admin summary: %w", err)
	}
	return sum.ByState["active"], nil
}

// waitActiveQueues waits until the hub at hubURL runs want active delivery
// queues, at most limit. A poll that fails is retried until then: a poll
// may take long, since a hub's first summary reads every subscription of
// the store, and later ones the shards that changed meanwhile. Polls are
// further apart on a big hub.
func waitActiveQueues(ctx context.Context, hubURL, adminToken string, want int, limit time.Duration) error {
	client := &http.Client{Timeout: limit}
	deadline := time.Now().Add(limit)
	for {
		active, err := countActiveQueues(ctx, client, hubURL, adminToken)
		if err == nil && active >= want {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("queues not all delivering after %v: %w", limit, err)
			}
			return fmt.Errorf("%d of %d queues delivering after %v", active, want, limit)
		}
		t := time.NewTimer(100*time.Millisecond + time.Duration(want)*10*time.Microsecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
