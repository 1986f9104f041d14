package dashboard_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/dashboard"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/jslog"
	"github.com/rshub/rshub/hub/redisstore"
	"github.com/rshub/rshub/internal/browsertest"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/internal/testenv"
)

const token = "dash-admin-token"

// listRequests records the admin list requests the page makes.
type listRequests struct {
	mu    sync.Mutex
	paths []string
}

func (l *listRequests) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/admin/subscriptions" || r.URL.Path == "/admin/channels" || r.URL.Path == "/admin/deliveries" {
			l.mu.Lock()
			l.paths = append(l.paths, r.URL.RequestURI())
			l.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (l *listRequests) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.paths...)
}

// failingEngine is a delivery engine whose queues of the given
// subscriptions fail.
type failingEngine struct{ stats []delivery.SubStats }

func (e failingEngine) Stats() []delivery.SubStats                    { return e.stats }
func (e failingEngine) Redrive(context.Context, string, string) error { return nil }

// bigHub serves the dashboard and the admin API of a hub whose Redis
// store holds subs subscriptions over 50 topics and channels channels;
// the subscriptions with callbacks …/cb/<i> for i in failing fail.
func bigHub(t testing.TB, subs, channels int, failing []int) (string, *listRequests) {
	t.Helper()
	ctx := context.Background()
	st, err := redisstore.Open(ctx, testenv.Redis(t), redisstore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	_, nc := testenv.NATS(t)
	lg, err := jslog.Open(ctx, nc, jslog.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lg.Close() })
	pol, _ := netguard.ParsePolicy([]string{"127.0.0.0/8"})
	mux := http.NewServeMux()
	reqs := &listRequests{}
	checked := hubtest.LoadContract(t).Validating(t, mux) // the admin API's answers, against its contract
	srv := httptest.NewServer(reqs.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/admin/") {
			checked.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r) // this hub has no /events or /ws: the page's live view is not under test
	})))
	t.Cleanup(srv.Close)
	h, err := hub.New(hub.Config{HubURL: srv.URL + "/", Store: st, Log: lg, Client: netguard.NewClient(pol, netguard.Timeouts{}),
		Activator: nopActivator{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range channels {
		if _, err := h.PutChannel(ctx, hub.Channel{Name: fmt.Sprintf("ch%03d", i), Hosted: true, Trust: hub.TrustOpen}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	sub := func(i int) hub.Subscription {
		topic := fmt.Sprintf("http://127.0.0.1:1/source/%d/changes", i%50)
		cb := fmt.Sprintf("http://127.0.0.1:9/cb/%d", i)
		return hub.Subscription{ID: hub.SubscriptionID(topic, cb), Topic: topic, Channel: fmt.Sprintf("src%d", i%50), Callback: cb,
			State: hub.SubActive, Lease: 3600, Expires: now.Add(time.Hour), Created: now}
	}
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < subs; i += writers {
				if err := st.PutSubscription(ctx, sub(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	var stats []delivery.SubStats
	for _, i := range failing {
		s := sub(i)
		stats = append(stats, delivery.SubStats{ID: s.ID, Topic: s.Topic, Channel: s.Channel, Callback: s.Callback, State: delivery.StateFailing, HostBreaker: "closed",
			LastStatus: 500, LastAttempt: now, ConsecutiveFailures: 4})
		if i == failing[0] { // its callback's circuit lets a probe through
			stats[len(stats)-1].CallbackBreaker = &delivery.BreakerStats{State: "half-open", ConsecutiveFailures: 5, Failures: 5, CoolDownSeconds: 30}
		}
	}
	slices.SortFunc(stats, func(a, b delivery.SubStats) int { return strings.Compare(a.ID, b.ID) })
	api, err := admin.New(admin.Config{Token: token, Hub: h, Store: st, Deliveries: failingEngine{stats: stats}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	api.Register(mux)
	dashboard.New(dashboard.Config{AdminToken: token, HubURL: srv.URL + "/", Logger: slog.New(slog.DiscardHandler)}).Register(mux)
	return srv.URL, reqs
}

type nopActivator struct{}

func (nopActivator) Activate(hub.Subscription) {}
func (nopActivator) Deactivate(string)         {}

// browser starts headless Chromium for the test; uncaught exceptions of
// the page are collected.
func browser(t testing.TB) (context.Context, func() []string) {
	t.Helper()
	ctx := browsertest.Start(t, 90*time.Second)
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), errs...) }
}

// waitJS polls a JavaScript condition until it holds or within is over.
func waitJS(t testing.TB, ctx context.Context, what string, within time.Duration, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ""`))
		t.Fatalf("waiting for %s: %v\npage text:\n%s", what, err, body)
	}
}

func evalInt(t *testing.T, ctx context.Context, js string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return n
}

const rows = `document.querySelectorAll("#subs tbody tr[data-sub-id]:not(.deadletters)").length`

func TestDashboard_ManySubscriptionsLoadOnePageFailingFirst(t *testing.T) {
	failing := []int{17, 1234, 2500, 4999}
	base, reqs := bigHub(t, 5000, 130, failing)
	ctx, pageErrors := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/dashboard/#token="+token)); err != nil {
		t.Fatal(err)
	}

	// One page, the failing ones first, the counts from the summary.
	waitJS(t, ctx, "the first page of subscriptions", 30*time.Second, rows+` >= 100`)
	waitJS(t, ctx, "the summary", 10*time.Second, `(document.querySelector('#summary [data-count="subscriptions"] strong') || {}).textContent === "5000"`)
	if n := evalInt(t, ctx, rows); n > 100+len(failing) {
		t.Errorf("%d subscription rows after loading, want one page of 100 and the %d failing", n, len(failing))
	}
	firstFailing := evalInt(t, ctx, fmt.Sprintf(`Array.from(document.querySelectorAll("#subs tbody tr[data-sub-id]")).slice(0, %d).filter(r => r.dataset.state === "failing" && r.classList.contains("failing-first")).length`, len(failing)))
	if firstFailing != len(failing) {
		t.Errorf("%d of the first %d rows are failing, want all", firstFailing, len(failing))
	}
	if n := evalInt(t, ctx, `document.querySelectorAll('#subs tbody tr[data-sub-id] [data-circuit="callback"]').length`); n != 1 {
		t.Errorf("%d rows name their callback's circuit, want 1", n)
	}
	if n := evalInt(t, ctx, `document.querySelectorAll("#channels tbody tr[data-channel]").length`); n != 100 {
		t.Errorf("%d channel rows, want one page of 100", n)
	}
	for _, p := range reqs.all() {
		if strings.HasPrefix(p, "/admin/deliveries") || (!strings.Contains(p, "limit=100") && !strings.Contains(p, "status=failing")) {
			t.Errorf("the page asked for %s: more than a page", p)
		}
	}

	// Load more: a second page.
	if err := chromedp.Do(ctx, browsertest.Click("#subs-more")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the second page", 20*time.Second, rows+` >= 200`)

	// Search: one subscription of the 5000, by its callback.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#subs-search"), "cb/4321")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the search result", 30*time.Second, rows+` === 1 && document.querySelector("#subs tbody tr[data-sub-id] .mono").textContent.endsWith("/cb/4321")`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#channels-search"), "ch12")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the channel search", 20*time.Second, `document.querySelectorAll("#channels tbody tr[data-channel]").length === 10`)
	if errs := pageErrors(); len(errs) > 0 {
		t.Errorf("page exceptions: %v", errs)
	}
	t.Logf("%d admin list requests, e.g. %s", len(reqs.all()), strconv.Quote(reqs.all()[0]))
}

// BenchmarkDashboardAt100k measures the time from opening the dashboard
// to its first page of subscriptions (the failing ones first) and its
// summary, in headless Chromium, with 100,000 subscriptions and 1,000
// channels in Redis.
//
//	go test -run '^$' -bench DashboardAt100k -benchtime 5x ./dashboard/
func BenchmarkDashboardAt100k(b *testing.B) {
	base, _ := bigHub(b, 100_000, 1000, []int{7, 50_000, 99_999})
	ctx, _ := browser(b)
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/dashboard/#token="+token)); err != nil {
			b.Fatal(err)
		}
		waitJS(b, ctx, "the first page and the summary", 60*time.Second, rows+` >= 100 && document.querySelectorAll("#subs tbody tr.failing-first").length === 3 &&
			(document.querySelector('#summary [data-count="subscriptions"] strong') || {}).textContent === "100000"`)
		b.StopTimer()
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
