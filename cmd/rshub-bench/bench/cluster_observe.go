package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisCounters are Redis's own counters of the work it did.
type redisCounters struct {
	at       time.Time
	commands uint64  // INFO stats total_commands_processed
	cpu      float64 // INFO cpu used_cpu_sys + used_cpu_user, seconds
}

// readRedisCounters asks Redis for its counters (one INFO command).
func readRedisCounters(ctx context.Context, rdb *redis.Client) (redisCounters, error) {
	info, err := rdb.Info(ctx).Result()
	if err != nil {
		return redisCounters{}, fmt.Errorf("redis INFO: %w", err)
	}
	c := redisCounters{at: time.Now()}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch k {
		case "total_commands_processed":
			c.commands, _ = strconv.ParseUint(v, 10, 64)
		case "used_cpu_sys", "used_cpu_user":
			f, _ := strconv.ParseFloat(v, 64)
			c.cpu += f
		}
	}
	return c, nil
}

// redisRate is the work Redis did between two readings: commands per
// second (not counting the INFO command that took the later reading) and
// CPU in percent of one core.
type redisRate struct {
	commands float64
	cpu      float64
}

func rateBetween(a, b redisCounters) redisRate {
	d := b.at.Sub(a.at).Seconds()
	if d <= 0 || b.commands < a.commands+1 {
		return redisRate{}
	}
	return redisRate{commands: float64(b.commands-a.commands-1) / d, cpu: 100 * (b.cpu - a.cpu) / d}
}

// measureRedis reads Redis's counters, waits window (the measurement
// window) and reads them again.
func measureRedis(ctx context.Context, rdb *redis.Client, window time.Duration) (redisRate, error) {
	a, err := readRedisCounters(ctx, rdb)
	if err != nil {
		return redisRate{}, err
	}
	if err := pause(ctx, window); err != nil {
		return redisRate{}, err
	}
	b, err := readRedisCounters(ctx, rdb)
	if err != nil {
		return redisRate{}, err
	}
	return rateBetween(a, b), nil
}

// pause waits d or until ctx ends: a measurement window or a settling
// period, never a substitute for waiting on a condition.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// activeDeliveries returns the IDs of the subscriptions whose delivery
// the hub at hubURL runs (state "active" in its admin API's deliveries),
// following the list's pages.
func activeDeliveries(ctx context.Context, hubURL string) (map[string]bool, error) {
	type stat struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	client := &http.Client{Timeout: time.Minute}
	out := map[string]bool{}
	for next := hubURL + "admin/deliveries?limit=1000"; next != ""; {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, fmt.Errorf("admin deliveries: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+clusterAdminToken)
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("admin deliveries: %w", err)
		}
		var stats []stat
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d: %s", resp.StatusCode, drain(resp))
		} else {
			err = json.NewDecoder(resp.Body).Decode(&stats)
		}
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("admin deliveries: %w", err)
		}
		for _, s := range stats {
			if s.State == "active" {
				out[s.ID] = true
			}
		}
		if next, err = nextPage(resp.Request.URL, resp.Header.Get("Link")); err != nil {
			return nil, fmt.Errorf("admin deliveries: %w", err)
		}
	}
	return out, nil
}

// nextPage returns the URL of a Link header's rel="next" target, resolved
// against base; "" when there is none.
func nextPage(base *url.URL, link string) (string, error) {
	for part := range strings.SplitSeq(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.Contains(params, `rel="next"`) {
			continue
		}
		u, err := base.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			return "", fmt.Errorf("next link %q: %w", target, err)
		}
		return u.String(), nil
	}
	return "", nil
}
