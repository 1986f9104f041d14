package hub_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/kvstore"
	"github.com/rshub/rshub/internal/embednats"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/wire"
)

// BenchmarkPublish measures durable publish intake over loopback HTTP: a
// fat ping is parsed, validated, checked for continuity, appended to the
// JetStream log and answered 200. Each publisher owns a channel and sends a
// contiguous series. Reported: publishes/s and p50/p99 latency, for 1 and 64
// publishers under each fsync policy.
func BenchmarkPublish(b *testing.B) {
	for _, policy := range []embednats.SyncPolicy{embednats.SyncDefault, embednats.SyncAlways} {
		for _, publishers := range []int{1, 64} {
			b.Run(fmt.Sprintf("sync=%s/publishers=%d", policy, publishers), func(b *testing.B) {
				benchPublish(b, policy, publishers)
			})
		}
	}
}

func benchPublish(b *testing.B, policy embednats.SyncPolicy, publishers int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lg, st := benchBackend(b, policy)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	h, err := hub.New(hub.Config{HubURL: ts.URL + "/", Store: st, Log: lg, Client: hubtest.Client(b, "127.0.0.0/8"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h.Register(mux)
	topics := make([]string, publishers)
	for i := range topics {
		c, err := h.PutChannel(ctx, hub.Channel{Topic: fmt.Sprintf("http://127.0.0.1:1/bench/%d/", i), Trust: hub.TrustOpen})
		if err != nil {
			b.Fatal(err)
		}
		topics[i] = c.Topic
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: publishers}}
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				from := base.Add(time.Duration(k) * time.Second)
				body := hubtest.Notif("change-notification", from.Format(time.RFC3339), from.Add(time.Second).Format(time.RFC3339), from.Add(time.Second/2).Format(time.RFC3339Nano))
				req, _ := http.NewRequest(http.MethodPost, ts.URL+"/", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/xml")
				req.Header.Set("Link", wire.NotificationLinks(topics[p], ts.URL+"/", ""))
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "publishes/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkVerify measures subscription throughput end to end: subscribe
// requests answered 202, verification GETs to a loopback callback that
// echoes the challenge, and the subscription stored active. Reported:
// verified subscriptions/s.
func BenchmarkVerify(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lg, st := benchBackend(b, embednats.SyncDefault)
	var verified atomic.Int64
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Query().Get("hub.challenge"))
	}))
	defer cb.Close()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	act := activatorFunc(func() { verified.Add(1) })
	h, err := hub.New(hub.Config{HubURL: ts.URL + "/", Store: st, Log: lg, Client: hubtest.Client(b, "127.0.0.0/8"), Activator: act, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h.Register(mux)
	go func() { _ = h.Run(ctx) }()
	ch, err := h.PutChannel(ctx, hub.Channel{Topic: "http://127.0.0.1:1/bench/", Trust: hub.TrustOpen})
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				form := hubtest.SubscribeForm(ch.Topic, fmt.Sprintf("%s/cb/%d", cb.URL, i))
				resp, err := client.PostForm(ts.URL+"/", form)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(time.Minute)
	for verified.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling a counter with a deadline, not synchronisation by sleep
	}
	if verified.Load() < int64(b.N) {
		b.Fatalf("%d of %d verified within a minute", verified.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "verified/s")
}

type activatorFunc func()

func (f activatorFunc) Activate(hub.Subscription) { f() }
func (f activatorFunc) Deactivate(string)         {}

// benchBackend is a JetStream log and KV store on an embedded NATS server
// with the given fsync policy, closed when the benchmark ends.
func benchBackend(b *testing.B, policy embednats.SyncPolicy) (*jslog.Log, *kvstore.Store) {
	b.Helper()
	srv, err := embednats.Start(embednats.Config{DataDir: b.TempDir(), Sync: policy})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Shutdown)
	nc, err := srv.Connect()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	return hubtest.BackingOn(b, nc)
}
