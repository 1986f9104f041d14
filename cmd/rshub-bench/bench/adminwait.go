package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// activeQueuesGauge is the hub's gauge of the webhook queues it runs in
// delivery state active, as GET /metrics reports it.
const activeQueuesGauge = `rshub_subscriptions{state="active"}`

// activeQueuesPoll is how often waitActiveQueues reads the gauge. Reading
// it costs the hub one scrape of its gauges, whatever its size, so a start
// is timed to this resolution without slowing it.
const activeQueuesPoll = 100 * time.Millisecond

// readGauge returns the value of the series name (metric name and labels,
// as the text format writes them) that GET /metrics of the hub at hubURL
// reports, and whether it reports it at all.
func readGauge(ctx context.Context, client *http.Client, hubURL, name string) (float64, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hubURL+"metrics", nil)
	if err != nil {
		return 0, false, fmt.Errorf("metrics: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, false, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("metrics: status %d: %s", resp.StatusCode, drain(resp))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, false, fmt.Errorf("metrics: %s: %w", name, err)
			}
			return f, true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("metrics: %w", err)
	}
	return 0, false, nil
}

// waitActiveQueues waits until the hub at hubURL runs want active delivery
// queues, at most limit, reading its gauge every activeQueuesPoll. A read
// that fails is retried until then. (GET /admin/summary, which reports the
// same count, is not polled: its first call reads every subscription of the
// store and its channel count the whole channel list, work that would slow
// the start it times.)
func waitActiveQueues(ctx context.Context, hubURL string, want int, limit time.Duration) error {
	client := &http.Client{Timeout: limit}
	deadline := time.Now().Add(limit)
	for {
		active, _, err := readGauge(ctx, client, hubURL, activeQueuesGauge)
		if err == nil && int(active) >= want {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("queues not all delivering after %v: %w", limit, err)
			}
			return fmt.Errorf("%d of %d queues delivering after %v", int(active), want, limit)
		}
		t := time.NewTimer(activeQueuesPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
