package admin_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
)

// Scale of the list benchmarks: 100,000 subscriptions over 10,000 topics.
const (
	benchSubs   = 100_000
	benchTopics = 10_000
)

// BenchmarkListAt100k measures admin list requests, over loopback HTTP, of
// a hub whose Redis store holds 100,000 subscriptions over 10,000 topics,
// each topic a channel.
//
//	go test -run '^$' -bench ListAt100k -benchtime 20x -v ./admin/
//
// (-v shows the seeding time; the read-all baseline takes about 1.5 s an
// iteration.)
func BenchmarkListAt100k(b *testing.B) {
	ctx := context.Background()
	st, err := redisstore.Open(ctx, testenv.Redis(b), redisstore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	start := time.Now()
	seedBench(b, st)
	b.Logf("seeded %d subscriptions over %d topics in %s", benchSubs, benchTopics, time.Since(start).Round(time.Millisecond))
	base := benchAPI(b, st)

	get := func(b *testing.B, path string) string {
		b.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return resp.Header.Get("Link")
	}
	// a cursor half-way through: follow the next links of pages of 1000
	midCursor := func(path string, pages int) string {
		for range pages {
			l := get(b, path)
			path = l[1 : len(l)-len(`>; rel="next"`)]
		}
		u, _ := url.Parse(path)
		return u.Query().Get("cursor")
	}
	midSubs := midCursor("/admin/subscriptions?limit=1000", benchSubs/2/1000)
	midChannels := midCursor("/admin/channels?limit=1000", benchTopics/2/1000)
	get(b, "/admin/summary") // the summary's first count reads every shard once

	for _, bc := range []struct{ name, path string }{
		{"subscriptions/first-page-100", "/admin/subscriptions?limit=100"},
		{"subscriptions/mid-cursor-100", "/admin/subscriptions?limit=100&cursor=" + midSubs},
		{"subscriptions/first-page-1000", "/admin/subscriptions?limit=1000"},
		{"subscriptions/mid-cursor-1000", "/admin/subscriptions?limit=1000&cursor=" + midSubs},
		{"subscriptions/search-one-bounded-page", "/admin/subscriptions?limit=100&q=cb/99999"},
		{"subscriptions/one-topic", "/admin/subscriptions?limit=100&topic=" + url.QueryEscape(benchTopic(4242))},
		{"channels/first-page-100", "/admin/channels?limit=100"},
		{"channels/mid-cursor-100", "/admin/channels?limit=100&cursor=" + midChannels},
		{"channels/search", "/admin/channels?limit=100&q=c4242"},
		{"summary/at-rest", "/admin/summary"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				get(b, bc.path)
			}
		})
	}
	// the baseline: what an unpaged list read, every subscription at once
	b.Run("baseline/store-read-all", func(b *testing.B) {
		for b.Loop() {
			if all, err := st.Subscriptions(ctx, ""); err != nil || len(all) != benchSubs {
				b.Fatalf("%d subscriptions, %v", len(all), err)
			}
		}
	})
}

func benchTopic(n int) string { return fmt.Sprintf("http://127.0.0.1:1/source/%d/changes", n) }

// seedBench stores benchSubs subscriptions, benchSubs/benchTopics per
// topic, and a channel per topic, with 16 writers.
func seedBench(b *testing.B, st hub.Store) {
	b.Helper()
	const writers = 16
	now := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < benchSubs; i += writers {
				topic := benchTopic(i % benchTopics)
				cb := fmt.Sprintf("http://127.0.0.1:9/cb/%d", i)
				s := hub.Subscription{ID: hub.SubscriptionID(topic, cb), Topic: topic, Channel: fmt.Sprintf("c%d", i%benchTopics),
					Callback: cb, State: hub.SubActive, Lease: 86400, Expires: now.Add(24 * time.Hour), Created: now}
				if err := st.PutSubscription(context.Background(), s); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < benchTopics; i += writers {
				c := hub.Channel{Topic: benchTopic(i), Name: fmt.Sprintf("c%d", i), Trust: hub.TrustOpen, Created: now}
				if err := st.PutChannel(context.Background(), c); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// benchAPI serves the admin API of a hub over st on loopback and returns
// its base URL.
func benchAPI(b *testing.B, st hub.Store) string {
	b.Helper()
	lg, _ := hubtest.Backing(b)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	h, err := hub.New(hub.Config{HubURL: srv.URL + "/", Store: st, Log: lg, Client: hubtest.Client(b, "127.0.0.0/8"),
		Activator: &hubtest.Activations{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	api, err := admin.New(admin.Config{Token: adminToken, Hub: h, Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	api.Register(mux)
	return srv.URL
}
