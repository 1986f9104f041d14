package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
)

// DefaultCeilingWorkers are the plain sender's worker counts the webhook
// scenarios sweep: the ceiling is the fastest of them (and of the hub's own
// concurrency), so that a sender tuned worse than the machine allows does
// not flatter the hub.
func DefaultCeilingWorkers() []int { return []int{8, 16, 32, 64, 256} }

// sweepSizes returns the worker counts the ceiling tries for cfg: the
// configured ones and the hub's own concurrency (the ceiling of earlier
// versions), sorted and without repeats.
func sweepSizes(cfg Config) []int {
	sizes := append(slices.Clone(cfg.CeilingWorkers), ceilingWorkers(cfg))
	slices.Sort(sizes)
	return slices.Compact(sizes)
}

// sweepPoint is one plain sender of the sweep and its full-speed
// measurement.
type sweepPoint struct {
	workers int
	f       fanout
}

// fastest returns the index of the point with the highest deliveries/s;
// on a tie the fewer workers win. It returns -1 for no points.
func fastest(points []sweepPoint) int {
	best := -1
	for i, p := range points {
		if math.IsNaN(p.f.rate) {
			continue
		}
		if best < 0 || p.f.rate > points[best].f.rate ||
			p.f.rate == points[best].f.rate && p.workers < points[best].workers {
			best = i
		}
	}
	return best
}

// senderPool is one plain sender: workers keep-alive net/http goroutines
// that live as long as the bench, fed the POSTs of each notification in
// turn.
type senderPool struct {
	workers int
	jobs    chan rawJob
	done    sync.WaitGroup
}

// startSenderPool starts workers goroutines POSTing with client.
func startSenderPool(workers int, client *http.Client, url func(int) string) *senderPool {
	p := &senderPool{workers: workers, jobs: make(chan rawJob, 4096)}
	for range workers {
		p.done.Add(1)
		goLabelled("ceiling", func() {
			defer p.done.Done()
			for j := range p.jobs {
				postRaw(j.ctx, client, url(j.callback), j.body, j.link)
			}
		})
	}
	return p
}

// stop ends the pool's goroutines once they have sent what is queued.
func (p *senderPool) stop() {
	close(p.jobs)
	p.done.Wait()
}

// sweep measures every sender of the bench at full speed, n notifications
// each, fewest workers first. Each measurement is bounded by count and by
// --duration-cap, so the sweep is bounded by the number of senders times
// that.
func (b *webhookBench) sweep(ctx context.Context, n int) ([]sweepPoint, error) {
	points := make([]sweepPoint, 0, len(b.pools))
	for _, p := range b.pools {
		f, err := b.measure(ctx, n, 0, b.publishRaw(p))
		if err != nil {
			return nil, fmt.Errorf("sender of %d workers: %w", p.workers, err)
		}
		b.lg.Info("webhook: sender measured", "workers", p.workers, "deliveries/s", int(f.rate))
		points = append(points, sweepPoint{workers: p.workers, f: f})
	}
	return points, nil
}

// sweepSamples are the info rows that print the sweep beside the ratio:
// each sender's deliveries/s under the hub's, and the fastest sender's
// workers under the hub's most deliveries in flight.
func sweepSamples(cfg Config, hub fanout, points []sweepPoint, best int) []sample {
	out := make([]sample, 0, len(points)+1)
	for _, p := range points {
		out = append(out, sample{Name: fmt.Sprintf("deliveries/s, sender of %d workers", p.workers), Unit: "1/s", Better: "info",
			Hub: hub.rate, Ceiling: p.f.rate})
	}
	return append(out, sample{Name: "in flight: hub max, fastest sender", Unit: "", Better: "info",
		Hub: float64(cfg.concurrency()), Ceiling: float64(points[best].workers)})
}
