package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// seedSubs stores n subscriptions to topic straight into the fixture's
// store, the i-th with callback http://127.0.0.1:9/cb/<i>; every third is
// pending, every fifth has expired. It returns them by ID.
func (f *fixture) seedSubs(topic, channel string, n int) map[string]hub.Subscription {
	f.T.Helper()
	out := make(map[string]hub.Subscription, n)
	now := time.Now()
	for i := range n {
		cb := fmt.Sprintf("http://127.0.0.1:9/cb/%d", i)
		s := hub.Subscription{ID: hub.SubscriptionID(topic, cb), Topic: topic, Channel: channel, Callback: cb, Secret: "s3cret",
			State: hub.SubActive, Lease: 3600, Expires: now.Add(time.Hour), Created: now}
		switch {
		case i%3 == 0:
			s.State = hub.SubPending
		case i%5 == 0:
			s.Expires = now.Add(-time.Minute)
		}
		if err := f.Store.PutSubscription(context.Background(), s); err != nil {
			f.T.Fatal(err)
		}
		out[s.ID] = s
	}
	return out
}

var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// adminGet sends an admin GET and returns its status, body and next link.
func (f *fixture) adminGet(path string) (int, string, string) {
	f.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.Server.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.T.Fatal(err)
	}
	next := ""
	if l := resp.Header.Get("Link"); l != "" {
		m := nextLink.FindStringSubmatch(l)
		if m == nil {
			f.T.Fatalf("GET %s: Link %q is not a next link", path, l)
		}
		next = m[1]
	}
	return resp.StatusCode, string(b), next
}

// walk follows the next links from path and returns every subscription
// listed, in order, and the number of pages.
func (f *fixture) walk(path string) ([]admin.SubscriptionView, int) {
	return walkPages[admin.SubscriptionView](f, path)
}

// walkPages follows the next links of a list from path, decoding each
// page's items as T, and returns them all and the number of pages.
func walkPages[T any](f *fixture, path string) ([]T, int) {
	f.T.Helper()
	var all []T
	pages := 0
	for path != "" {
		status, body, next := f.adminGet(path)
		if status != http.StatusOK {
			f.T.Fatalf("GET %s: %d %s", path, status, body)
		}
		var items []T
		if err := json.Unmarshal([]byte(body), &items); err != nil {
			f.T.Fatalf("GET %s: %v", path, err)
		}
		all = append(all, items...)
		pages++
		if pages > 1000 {
			f.T.Fatal("more than 1000 pages")
		}
		path = next
	}
	return all, pages
}

// ids returns the IDs of views, checking that none repeats.
func ids(t *testing.T, views []admin.SubscriptionView) []string {
	t.Helper()
	out := make([]string, 0, len(views))
	seen := map[string]bool{}
	for _, v := range views {
		if seen[v.ID] {
			t.Errorf("subscription %s listed twice", v.ID)
		}
		seen[v.ID] = true
		out = append(out, v.ID)
	}
	slices.Sort(out)
	return out
}

func TestListSubscriptions_PagesListEveryOneOnce(t *testing.T) {
	f := newFixture(t)
	seeded := f.seedSubs(openTopic, "open", 230)
	want := slices.Sorted(func(yield func(string) bool) {
		for id := range seeded {
			if !yield(id) {
				return
			}
		}
	})
	for _, limit := range []int{1, 37, 1000} {
		all, pages := f.walk(fmt.Sprintf("/admin/subscriptions?limit=%d", limit))
		if got := ids(t, all); !slices.Equal(got, want) {
			t.Errorf("limit %d: listed %d subscriptions, want the %d seeded", limit, len(got), len(want))
		}
		if min := (len(want) + limit - 1) / limit; pages < min {
			t.Errorf("limit %d: %d pages, want at least %d", limit, pages, min)
		}
		for _, v := range all {
			if v.Secret != "(set)" {
				t.Fatalf("subscription %s listed with its secret", v.ID)
			}
		}
	}
	// the topic's own walk, from its index
	all, _ := f.walk("/admin/subscriptions?limit=50&topic=" + url.QueryEscape(openTopic))
	if got := ids(t, all); !slices.Equal(got, want) {
		t.Errorf("topic walk listed %d, want %d", len(got), len(want))
	}
}

func TestListSubscriptions_SearchAndStatusFilter(t *testing.T) {
	f := newFixture(t)
	seeded := f.seedSubs(openTopic, "open", 60)
	count := func(keep func(i int, s hub.Subscription) bool) int {
		n := 0
		for _, s := range seeded {
			var i int
			fmt.Sscanf(s.Callback, "http://127.0.0.1:9/cb/%d", &i)
			if keep(i, s) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"q=CB/4", count(func(i int, _ hub.Subscription) bool { return strings.HasPrefix(fmt.Sprint(i), "4") })},
		{"status=pending", count(func(i int, _ hub.Subscription) bool { return i%3 == 0 })},
		{"status=expired", count(func(i int, _ hub.Subscription) bool { return i%3 != 0 && i%5 == 0 })},
		{"status=active", count(func(i int, _ hub.Subscription) bool { return i%3 != 0 && i%5 != 0 })},
		{"status=pending&q=cb/1", count(func(i int, _ hub.Subscription) bool { return i%3 == 0 && strings.HasPrefix(fmt.Sprint(i), "1") })},
		{"q=" + url.QueryEscape(openTopic), 60},
		{"q=nowhere", 0},
		{"status=failing", 0}, // no delivery engine
	} {
		for _, limit := range []string{"", "&limit=7"} {
			all, _ := f.walk("/admin/subscriptions?" + tc.query + limit)
			if got := len(ids(t, all)); got != tc.want {
				t.Errorf("%s%s: %d subscriptions, want %d", tc.query, limit, got, tc.want)
			}
		}
	}
}

func TestListSubscriptions_RefusesBadLimitsAndCursors(t *testing.T) {
	f := newFixture(t)
	f.seedSubs(openTopic, "open", 3)
	_, _, next := f.adminGet("/admin/subscriptions?limit=1")
	if next == "" {
		t.Fatal("a page of 1 of 3 subscriptions has no next link")
	}
	u, _ := url.Parse(next)
	shardCursor := u.Query().Get("cursor")
	for _, tc := range []struct{ path, want string }{
		{"/admin/subscriptions?limit=0", "limit"},
		{"/admin/subscriptions?limit=1001", "limit"},
		{"/admin/subscriptions?limit=x", "limit"},
		{"/admin/subscriptions?cursor=%25%25", "cursor"},
		{"/admin/subscriptions?cursor=" + strings.Repeat("A", 20000), "cursor"},
		{"/admin/subscriptions?cursor=czY0Og", "cursor"},                                                   // shard 64
		{"/admin/subscriptions?status=failing&cursor=" + shardCursor, "another list"},                      // a shard cursor on another walk
		{"/admin/subscriptions?topic=" + url.QueryEscape(openTopic) + "&cursor=" + shardCursor, "another"}, // likewise
		{"/admin/channels?cursor=" + shardCursor, "another"},
		{"/admin/channels?limit=-3", "limit"},
		{"/admin/subscriptions?status=sleeping", "status"},
		{"/admin/deliveries?status=sleeping", "status"},
	} {
		status, body, _ := f.adminGet(tc.path)
		if status != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("GET %.80s: %d %q, want 400 about %s", tc.path, status, body, tc.want)
		}
	}
}

func TestListChannels_PagesAndSearch(t *testing.T) {
	f := newFixture(t)
	for i := range 25 {
		f.Channel(hub.Channel{Name: fmt.Sprintf("ch%02d", i), Hosted: true, Trust: hub.TrustOpen})
	}
	var names []string
	for path := "/admin/channels?limit=4"; path != ""; {
		status, body, next := f.adminGet(path)
		var page []admin.ChannelView
		if status != http.StatusOK || json.Unmarshal([]byte(body), &page) != nil || len(page) > 4 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		for _, c := range page {
			names = append(names, c.Name)
		}
		path = next
	}
	if len(names) != 25 || slices.Compact(slices.Sorted(slices.Values(names))) == nil || len(slices.Compact(slices.Sorted(slices.Values(names)))) != 25 {
		t.Errorf("pages listed %d channels (%v), want the 25 once each", len(names), names)
	}
	status, body, next := f.adminGet("/admin/channels?q=CH1")
	var page []admin.ChannelView
	if status != http.StatusOK || json.Unmarshal([]byte(body), &page) != nil || len(page) != 10 || next != "" {
		t.Errorf("search ch1: %d, %d channels, next %q; want the 10 of ch10-ch19", status, len(page), next)
	}
}

// indexedDeliveries is a delivery engine that offers admin.DeliveryIndex.
type indexedDeliveries struct{ stubDeliveries }

func (d indexedDeliveries) Stat(id string) (delivery.SubStats, bool) {
	for _, s := range d.stats {
		if s.ID == id {
			return s, true
		}
	}
	return delivery.SubStats{}, false
}

func (d indexedDeliveries) Failing() []delivery.SubStats {
	var out []delivery.SubStats
	for _, s := range d.stats {
		if s.State != delivery.StateActive || s.DeadLetters > 0 {
			out = append(out, s)
		}
	}
	return out
}

func (d indexedDeliveries) StatsPage(after string, limit int) ([]delivery.SubStats, bool) {
	i, _ := slices.BinarySearchFunc(d.stats, after, func(s delivery.SubStats, id string) int { return strings.Compare(s.ID, id) })
	for i < len(d.stats) && d.stats[i].ID <= after {
		i++
	}
	rest := d.stats[i:]
	if len(rest) > limit {
		return rest[:limit], true
	}
	return rest, false
}

func (d indexedDeliveries) StateCounts() (map[string]int, int) {
	by, dead := map[string]int{}, 0
	for _, s := range d.stats {
		by[s.State]++
		dead += s.DeadLetters
	}
	return by, dead
}

// healthOf gives the seeded subscriptions delivery stats: every fourth
// failing, every seventh with dead letters, the rest active; by ID.
func healthOf(seeded map[string]hub.Subscription) (stats []delivery.SubStats, failing []string) {
	for _, s := range seeded {
		var i int
		fmt.Sscanf(s.Callback, "http://127.0.0.1:9/cb/%d", &i)
		st := delivery.SubStats{ID: s.ID, Topic: s.Topic, Channel: s.Channel, Callback: s.Callback, State: delivery.StateActive, HostBreaker: "closed"}
		if i%4 == 0 {
			st.State, st.ConsecutiveFailures = delivery.StateFailing, 3
		}
		if i%7 == 0 {
			st.DeadLetters = 2
		}
		if i%4 == 0 || i%7 == 0 {
			failing = append(failing, s.ID)
		}
		stats = append(stats, st)
	}
	slices.SortFunc(stats, func(a, b delivery.SubStats) int { return strings.Compare(a.ID, b.ID) })
	slices.Sort(failing)
	return stats, failing
}

func TestListSubscriptions_FailingFromTheDeliveryEngine(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("index=%v", indexed), func(t *testing.T) {
			f := newFixture(t)
			stats, failing := healthOf(f.seedSubs(openTopic, "open", 40))
			f = f.withDeliveries(t, stats, indexed)
			all, _ := f.walk("/admin/subscriptions?status=failing&limit=3")
			if got := ids(t, all); !slices.Equal(got, failing) {
				t.Errorf("failing: listed %d, want %d", len(got), len(failing))
			}
			for _, v := range all {
				if v.Delivery == nil || v.Delivery.ID != v.ID {
					t.Errorf("failing %s listed without its delivery health", v.ID)
				}
			}
			status, body, _ := f.adminGet("/admin/summary")
			var sum admin.Summary
			if status != http.StatusOK || json.Unmarshal([]byte(body), &sum) != nil {
				t.Fatalf("summary: %d %s", status, body)
			}
			if sum.Subscriptions != 40 || sum.Failing != len(failing) || sum.Queues != 40 || sum.Dead != 2*len(slices.DeleteFunc(slices.Clone(stats), func(s delivery.SubStats) bool { return s.DeadLetters == 0 })) {
				t.Errorf("summary %+v; want 40 subscriptions and queues, %d failing", sum, len(failing))
			}
		})
	}
}

// withDeliveries returns a fixture whose admin API, on a new mux over the
// same store and hub, has a delivery engine reporting stats.
func (f *fixture) withDeliveries(t *testing.T, stats []delivery.SubStats, indexed bool) *fixture {
	t.Helper()
	var d admin.Deliveries = stubDeliveries{stats: stats}
	if indexed {
		d = indexedDeliveries{stubDeliveries{stats: stats}}
	}
	api, err := admin.New(admin.Config{Token: adminToken, Hub: f.Hub, Store: f.Store, Deliveries: d})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	g := *f
	g.Server = httptest.NewServer(hubtest.LoadContract(t).Validating(t, mux))
	t.Cleanup(g.Server.Close)
	return &g
}

func TestSummary_CountsFollowTheStore(t *testing.T) {
	f := newFixture(t)
	seeded := f.seedSubs(openTopic, "open", 30)
	summary := func() admin.Summary {
		t.Helper()
		status, body, _ := f.adminGet("/admin/summary")
		var s admin.Summary
		if status != http.StatusOK || json.Unmarshal([]byte(body), &s) != nil {
			t.Fatalf("summary: %d %s", status, body)
		}
		return s
	}
	s := summary()
	// callbacks 0..29: pending i%3==0 (10), expired i%5==0 of the rest (4), active 16
	if s.Subscriptions != 30 || s.ByStatus["pending"] != 10 || s.ByStatus["expired"] != 4 || s.ByStatus["active"] != 16 {
		t.Errorf("summary %+v, want 30: 10 pending, 4 expired, 16 active", s)
	}
	for id := range seeded {
		if err := f.Store.DeleteSubscription(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		break
	}
	if s := summary(); s.Subscriptions != 29 {
		t.Errorf("after a deletion: %d subscriptions, want 29", s.Subscriptions)
	}
}

// The webhook engine offers the index the admin API reads pages and the
// summary from.
var _ admin.DeliveryIndex = (*delivery.Webhooks)(nil)

// countingStore counts the shard reads of a store.
type countingStore struct {
	hub.Store
	mu    sync.Mutex
	reads int
}

func (c *countingStore) SubscriptionsInShard(ctx context.Context, shard int) ([]hub.Subscription, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Store.SubscriptionsInShard(ctx, shard)
}

// SubscriptionsInShards counts each shard of a listing of many at once.
func (c *countingStore) SubscriptionsInShards(ctx context.Context, shards []int) (map[int][]hub.Subscription, error) {
	c.mu.Lock()
	c.reads += len(shards)
	c.mu.Unlock()
	return c.Store.SubscriptionsInShards(ctx, shards)
}

func (c *countingStore) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.reads
	c.reads = 0
	return n
}

func TestListSubscriptions_APageReadsOnlyTheShardsItLists(t *testing.T) {
	var cs *countingStore
	f := newFixture(t, func(_ *hub.Config, c *admin.Config) {
		cs = &countingStore{Store: c.Store.(hub.Store)}
		c.Store = cs
	})
	f.seedSubs(openTopic, "open", 640) // 10 a shard on average
	cs.take()
	pages := 0
	for path := "/admin/subscriptions?limit=7"; path != ""; pages++ {
		status, body, next := f.adminGet(path)
		var items []admin.SubscriptionView
		if status != http.StatusOK || json.Unmarshal([]byte(body), &items) != nil {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		shards := map[int]bool{}
		for _, s := range items {
			shards[hub.ShardOf(s.ID)] = true
		}
		// the shards of its items, and at most one more, where it found
		// that more follow
		if reads := cs.take(); reads > len(shards)+1 {
			t.Errorf("page %d (%d items from %d shards) read %d shards", pages, len(items), len(shards), reads)
		}
		path = next
	}
	if pages < 640/7 {
		t.Errorf("%d pages of 7 for 640 subscriptions", pages)
	}
}
