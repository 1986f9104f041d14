package dashboard

import (
	"sync"
	"time"
)

// Defaults for RateConfig.
const (
	DefaultRateWindow   = 15 * time.Minute
	DefaultRateChannels = 64
)

// RateConfig configures a Rate.
type RateConfig struct {
	// Window is how much history is kept, in whole seconds; default 15 minutes.
	Window time.Duration
	// MaxChannels bounds the channels counted one by one, default 64; the
	// publishes of further channels count in the total only.
	MaxChannels int
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
}

// Rate counts publishes per second, in total and per channel, over a
// bounded window. It implements hub.Observer (only Published counts) and
// is safe for concurrent use; its memory is fixed by Window and
// MaxChannels.
type Rate struct {
	cfg   RateConfig
	n     int // slots: Window in seconds
	mu    sync.Mutex
	total ring
	chans map[string]*ring
}

// ring holds per-second counts: slot s%n counts second s when secs says
// so; older contents are stale and read as zero.
type ring struct {
	secs   []int64
	counts []uint32
}

func newRing(n int) *ring {
	return &ring{secs: make([]int64, n), counts: make([]uint32, n)}
}

func (r *ring) add(sec int64) {
	i := int(sec % int64(len(r.secs)))
	if r.secs[i] != sec {
		r.secs[i], r.counts[i] = sec, 0
	}
	r.counts[i]++
}

// series writes the counts of the seconds end-n+1 … end into out.
func (r *ring) series(end int64, out []uint32) {
	n := int64(len(out))
	for k := range n {
		sec := end - n + 1 + k
		if sec < 0 {
			continue
		}
		if i := sec % int64(len(r.secs)); r.secs[i] == sec {
			out[k] = r.counts[i]
		}
	}
}

// NewRate returns an empty Rate.
func NewRate(cfg RateConfig) *Rate {
	if cfg.Window < time.Second {
		cfg.Window = DefaultRateWindow
	}
	if cfg.MaxChannels <= 0 {
		cfg.MaxChannels = DefaultRateChannels
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	n := int(cfg.Window / time.Second)
	r := &Rate{cfg: cfg, n: n, chans: map[string]*ring{}}
	r.total = *newRing(n)
	return r
}

// Published counts one notification stored for channel.
func (r *Rate) Published(channel string, _ int, _ time.Duration) {
	sec := r.cfg.Clock().Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total.add(sec)
	c := r.chans[channel]
	if c == nil {
		if len(r.chans) >= r.cfg.MaxChannels {
			return
		}
		c = newRing(r.n)
		r.chans[channel] = c
	}
	c.add(sec)
}

// Rejected does nothing: Rate counts stored notifications only.
func (r *Rate) Rejected(string) {}

// Verified does nothing.
func (r *Rate) Verified(string, bool) {}

// GapRecorded does nothing: the admin API lists gaps.
func (r *Rate) GapRecorded(string) {}

// Unstored does nothing.
func (r *Rate) Unstored(string) {}

// Throughput is a snapshot of a Rate, as GET /dashboard/api/throughput
// returns it: one count per second, oldest first, the last one for the
// second End (still counting).
type Throughput struct {
	End      int64               `json:"end"`      // Unix second of the last count
	Interval int                 `json:"interval"` // seconds per count, 1
	Total    []uint32            `json:"total"`
	Channels map[string][]uint32 `json:"channels"`
}

// Snapshot returns the counts of the last seconds seconds (the whole window
// when seconds is out of range).
func (r *Rate) Snapshot(seconds int) Throughput {
	if seconds <= 0 || seconds > r.n {
		seconds = r.n
	}
	end := r.cfg.Clock().Unix()
	t := Throughput{End: end, Interval: 1, Total: make([]uint32, seconds), Channels: map[string][]uint32{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total.series(end, t.Total)
	for name, c := range r.chans {
		s := make([]uint32, seconds)
		c.series(end, s)
		t.Channels[name] = s
	}
	return t
}
