package hub_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

// scaleChannels are the channel counts the scale benchmarks compare: the
// cost of a publish must not grow with the channels a hub serves.
var scaleChannels = []int{1, 10000}

// intakeEnv is a running hub with many open channels on a JetStream log
// and KV store, and a publisher that keeps each channel contiguous.
type intakeEnv struct {
	hub    *hub.Hub
	srv    *httptest.Server
	client *http.Client
	topics []string
	sent   []int // notifications sent per channel
	stop   func()
}

var scaleBase = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// newIntakeEnv starts a hub with n channels on a JetStream log and KV
// store and publishes one notification to each, so that every channel has
// its working state.
func newIntakeEnv(b *testing.B, n int) *intakeEnv {
	b.Helper()
	lg, st := benchBackend(b, embednats.SyncDefault)
	return newIntakeEnvOn(b, n, lg, st, true)
}

// newIntakeEnvOn is newIntakeEnv on the given log and store; run says
// whether the hub's background work runs (without it, the caller flushes).
func newIntakeEnvOn(b *testing.B, n int, lg hub.Log, st hub.Store, run bool) *intakeEnv {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	h, err := hub.New(hub.Config{HubURL: srv.URL + "/", Store: st, Log: lg, Client: hubtest.Client(b, "127.0.0.0/8"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h.Register(mux)
	done := make(chan struct{})
	go func() {
		if run {
			_ = h.Run(ctx)
		}
		close(done)
	}()
	e := &intakeEnv{hub: h, srv: srv, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}, sent: make([]int, n)}
	e.stop = func() { // idempotent, and keeps nothing of the hub reachable once called
		if srv != nil {
			srv.Close()
			cancel()
			<-done
			srv, mux, h = nil, nil, nil
		}
	}
	b.Cleanup(e.stop)
	for i := range n {
		c, err := h.PutChannel(ctx, hub.Channel{Topic: fmt.Sprintf("http://127.0.0.1:1/scale/%d/", i), Trust: hub.TrustOpen})
		if err != nil {
			b.Fatal(err)
		}
		e.topics = append(e.topics, c.Topic)
	}
	for i := range n {
		e.publish(b, i)
	}
	return e
}

// publish sends channel i its next contiguous notification.
func (e *intakeEnv) publish(b *testing.B, i int) {
	from := scaleBase.Add(time.Duration(e.sent[i]) * time.Second)
	e.sent[i]++
	body := hubtest.Notif("change-notification", from.Format(time.RFC3339), from.Add(time.Second).Format(time.RFC3339), from.Add(time.Second/2).Format(time.RFC3339Nano))
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", wire.NotificationLinks(e.topics[i], e.srv.URL+"/", ""))
	resp, err := e.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("publish to channel %d: status %d", i, resp.StatusCode)
	}
}

// BenchmarkIntake_Channels measures durable publish intake (fat ping over
// loopback HTTP, continuity check, JetStream append, 200) by one publisher,
// on a hub with 1 channel and on a hub with 10,000 channels (each used
// once before): publishing to one of them (the cost must not grow with the
// hub), and round-robin to all (each publish then finds its channel's
// cached definition and reset check older than their 2 s lifetime, and
// its state is written to the store alone: three store round trips a
// hot channel amortises). Reported beside ns/op and allocations: p50 and
// p99 latency and the working states held.
func BenchmarkIntake_Channels(b *testing.B) {
	cases := []struct {
		name     string
		channels int
		pick     func(k, n int) int
	}{
		{"channels=1", 1, func(int, int) int { return 0 }},
		{"channels=10000/one", 10000, func(int, int) int { return 0 }},
		{"channels=10000/round-robin", 10000, func(k, n int) int { return k % n }},
	}
	envs := map[int]*intakeEnv{}
	for _, c := range cases {
		b.Run(c.name, func(sb *testing.B) {
			e := envs[c.channels]
			if e == nil {
				e = newIntakeEnv(b, c.channels) // once per size, kept across the b.N rounds
				envs[c.channels] = e
			}
			lat := make([]time.Duration, sb.N)
			sb.ReportAllocs()
			sb.ResetTimer()
			for k := range sb.N {
				t0 := time.Now()
				e.publish(sb, c.pick(k, c.channels))
				lat[k] = time.Since(t0)
			}
			sb.StopTimer()
			slices.Sort(lat)
			sb.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			sb.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			sb.ReportMetric(float64(e.hub.ChannelMemory().States), "states")
		})
	}
}

// BenchmarkIntake_ChannelHeap measures the heap the hub keeps per channel
// once each has been published to: the heap with the hub, minus the heap
// once the hub is stopped and dropped. The log and the store are in
// memory here (memBackend), quiet while it is weighed, and stay. Run it
// with -benchtime=1x; each round builds a hub.
func BenchmarkIntake_ChannelHeap(b *testing.B) {
	for _, n := range scaleChannels {
		b.Run(fmt.Sprintf("channels=%d", n), func(b *testing.B) {
			for range b.N {
				mem := newMemBackend()
				e := newIntakeEnvOn(b, n, mem, mem, false)
				e.hub.FlushStates(context.Background())
				if m := e.hub.ChannelMemory(); m.States != n || m.Dirty != 0 {
					b.Fatalf("%+v, want %d clean states", m, n)
				}
				with := heapInUse()
				e.client.CloseIdleConnections()
				e.stop()
				e = nil
				without := heapInUse()
				b.ReportMetric(float64(with-without)/float64(n), "hub-heap-B/channel")
				b.ReportMetric(float64(with-without)/(1<<20), "hub-heap-MB")
				runtime.KeepAlive(mem)
			}
		})
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
