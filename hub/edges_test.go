package hub_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/edgetest"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// Every hostile channel definition is refused by the one rule set, and
// none reaches the store.
func TestPutChannel_HostileDefinitionsRefused(t *testing.T) {
	f := newFixture(t)
	for _, c := range edgetest.Channels() {
		if got, err := f.Hub.PutChannel(context.Background(), c.Channel); err == nil {
			t.Errorf("%s: stored %q (%s)", c.Why, got.Name, wire.Clip(got.Topic))
		}
	}
	if chs, err := f.Store.Channels(context.Background()); err != nil || len(chs) != 0 {
		t.Fatalf("store holds %d channels (%v), want none", len(chs), err)
	}
}

// The rule refuses only what it names: ordinary names, names that merely
// contain a reserved word, and a topic without a name (it gets a derived
// one) are accepted.
func TestPutChannel_GoodNamesAccepted(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"a", "Z9", "b_c-d", strings.Repeat("x", 64), "console", "com10", "rshubx", "my-rshub", "frameworks", "x-framework2"} {
		f.Channel(hub.Channel{Name: name, Hosted: true, Trust: hub.TrustOpen})
	}
	c := f.Channel(hub.Channel{Topic: "http://src.example/data/", Trust: hub.TrustOpen})
	if hub.CheckNewChannelName(c.Name) != nil {
		t.Errorf("derived name %q breaks the rule", c.Name)
	}
	tok := f.Channel(hub.Channel{Topic: "http://src.example/tok/", Token: strings.Repeat("t", 16)})
	if tok.Trust != hub.TrustToken {
		t.Errorf("a token alone gave trust %q, want token", tok.Trust)
	}
}

// Issue 23 item 4: a channel and the framework channel the hub derives
// for it can never both be stored channels, in either order, nor when two
// hubs sharing a store create them at once; a store holding one from
// before the rule refuses its parent.
func TestPutChannel_FrameworkNamespaceBothOrders(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// b-framework first: refused, so b's framework channel stays b's
	if _, err := f.Hub.PutChannel(ctx, hub.Channel{Name: "b-framework", Hosted: true, Trust: hub.TrustOpen}); err == nil {
		t.Fatal("b-framework created before b")
	}
	f.Channel(hub.Channel{Name: "b", Hosted: true, Trust: hub.TrustOpen})
	// 204 until its first framework notification, 200 after: served either way
	if status, _ := hubtest.Do(t, mustReq(http.MethodHead, f.Server.URL+wire.TopicPath("b-framework"))); status != http.StatusOK && status != http.StatusNoContent {
		t.Errorf("HEAD b's framework topic: %d, want 200 or 204", status)
	}
	// b first, then b-framework: refused
	if _, err := f.Hub.PutChannel(ctx, hub.Channel{Name: "b-framework", Topic: "http://src.example/fw", Trust: hub.TrustOpen}); err == nil {
		t.Error("b-framework created after b")
	}
	// two hubs on one store, each creating one of the pair at once
	other := newHubOn(t, f)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, h := range []*hub.Hub{f.Hub, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := []string{"c", "c-framework"}[i]
			_, errs[i] = h.PutChannel(ctx, hub.Channel{Name: name, Hosted: true, Trust: hub.TrustOpen})
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] == nil {
		t.Errorf("concurrent c / c-framework: %v / %v, want c created and c-framework refused", errs[0], errs[1])
	}
	// a store from before the rule, holding d-framework: d is refused
	if err := f.Store.PutChannel(ctx, hub.Channel{Topic: "http://src.example/old", Name: "d-framework", Trust: hub.TrustOpen}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.PutChannel(ctx, hub.Channel{Name: "d", Hosted: true, Trust: hub.TrustOpen}); err == nil || !strings.Contains(err.Error(), "d-framework") {
		t.Errorf("d created beside a stored d-framework: %v", err)
	}
}

// newHubOn starts a second hub process on f's store and log.
func newHubOn(t *testing.T, f *fixture) *hub.Hub {
	t.Helper()
	h, err := hub.New(hub.Config{HubURL: f.URL, Store: f.Store, Log: f.Log, Client: http.DefaultClient, Now: f.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Issue 23 item 7: every hostile filter is refused by the one parser.
func TestParseFilterParams_HostileRefused(t *testing.T) {
	for _, c := range edgetest.Filters() {
		if f, err := changefeed.ParseFilter(c.Prefix, c.Change); err == nil {
			t.Errorf("%s: accepted as %+v", c.Why, f)
		}
	}
}

// A filter is kept normalised: repeated values once, in the order first
// given; absent parameters filter nothing.
func TestParseFilterParams_Normalised(t *testing.T) {
	f, err := changefeed.ParseFilter(
		[]string{"http://a.example/x/", "https://a.example/", "http://a.example/x/"},
		[]string{strings.Repeat("created,", 1300) + "deleted", " created , updated"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://a.example/x/", "https://a.example/"}; !slices.Equal(f.Prefixes, want) {
		t.Errorf("prefixes %q, want %q", f.Prefixes, want)
	}
	if want := []changefeed.Change{changefeed.Created, changefeed.Deleted, changefeed.Updated}; !slices.Equal(f.Changes, want) {
		t.Errorf("changes %q, want %q", f.Changes, want)
	}
	if f, err := changefeed.ParseFilter(nil, nil); err != nil || !f.IsZero() {
		t.Errorf("no parameters: %+v %v, want no filter", f, err)
	}
}

// hostileSubscribeForms are subscription forms every subscribe door must
// refuse: each hostile filter (issue 23 item 7), a signature scheme
// without a secret (item 8), and numeric host spellings in the callback
// and the topic (item 9). want is a text the answer must hold.
func hostileSubscribeForms(topic, cb string) map[string]struct {
	form url.Values
	want string
} {
	out := map[string]struct {
		form url.Values
		want string
	}{}
	for _, c := range edgetest.Filters() {
		v := hubtest.SubscribeForm(topic, cb)
		if c.Prefix != nil {
			v[wire.ParamFilterPrefix] = c.Prefix
		}
		if c.Change != nil {
			v[wire.ParamFilterChange] = c.Change
		}
		out["filter: "+c.Why] = struct {
			form url.Values
			want string
		}{v, "rshub.filter."}
	}
	for _, scheme := range []string{wire.SchemeStandard, wire.SchemeBoth, wire.SchemeWebSub} {
		out["signature "+scheme+" without secret"] = struct {
			form url.Values
			want string
		}{hubtest.SubscribeForm(topic, cb, wire.ParamSignatureScheme, scheme), "hub.secret"}
	}
	for _, host := range []string{"0", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::127.0.0.1]"} {
		want := "127.0.0.1"
		if host == "0" {
			want = "0.0.0.0"
		}
		out["callback host "+host] = struct {
			form url.Values
			want string
		}{hubtest.SubscribeForm(topic, "http://"+host+"/cb"), want}
		out["topic host "+host] = struct {
			form url.Values
			want string
		}{hubtest.SubscribeForm("http://"+host+"/t", cb), want}
	}
	return out
}

func TestParseSubscription_HostileOptionsRefused(t *testing.T) {
	for why, c := range hostileSubscribeForms("http://a.example/t", "http://b.example/cb") {
		if r, err := hub.ParseSubscription(c.form, hub.DefaultLeasePolicy()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %+v %v, want an error naming %q", why, r, err, c.want)
		}
	}
}

// Over HTTP, each is answered 400 with the reason and nothing is verified.
func TestSubscribe_HostileOptionsRefused(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	for why, c := range hostileSubscribeForms(ch.Topic, cb.URL("/cb")) {
		if status, body := f.PostForm(c.form); status != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %q, want 400 naming %q", why, status, body, c.want)
		}
	}
	if n := cb.Count.Load(); n != 0 {
		t.Errorf("%d verification requests for refused subscriptions", n)
	}
}

// Numeric host spellings in a thin ping's topic are refused at once, not
// looked up later, on a public hub too.
func TestThinPing_NumericTopicHostRefused(t *testing.T) {
	f := newFixture(t, func(c *hub.Config) { c.OpenTopics = true })
	for _, host := range []string{"0", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "[::127.0.0.1]"} {
		form := url.Values{"hub.mode": {"publish"}, "hub.url": {"http://" + host + "/cl.xml"}}
		if status, body := f.PostForm(form); status != http.StatusBadRequest || !strings.Contains(body, "0.0.") {
			t.Errorf("thin ping of host %s: %d %q, want 400 naming the address", host, status, body)
		}
	}
	if chs, _ := f.Store.Channels(context.Background()); len(chs) != 0 {
		t.Errorf("%d open channels created for refused topics", len(chs))
	}
}

// Issue 23 item 17: on a public hub the subscriptions are bounded per
// callback host (429) and in all (503), each answer naming its limit;
// renewals pass, unsubscribing is never limited, and a second hub on the
// same store counts the store's subscriptions.
func TestSubscribe_OpenTopicsLimits(t *testing.T) {
	limits := func(c *hub.Config) {
		c.OpenTopics, c.MaxSubscriptions, c.MaxSubscriptionsPerHost = true, 3, 2
	}
	f := newFixture(t, limits)
	cb := hubtest.NewCallback(t)
	byIP := func(p string) string { return cb.URL(p) }
	byName := func(p string) string { return strings.Replace(cb.URL(p), "127.0.0.1", "localhost", 1) }
	topic := func(i int) string { return "http://127.0.0.1:1/open/" + string(rune('a'+i)) }
	for i, c := range []struct {
		cb, topic, want string
		status          int
	}{
		{byIP("/1"), topic(0), "", 202},
		{byIP("/2"), topic(1), "", 202},
		{byIP("/3"), topic(2), "--max-subscriptions-per-host", 429},
		{byName("/1"), topic(0), "", 202},
		{byName("/2"), topic(1), "--max-subscriptions", 503},
		{byIP("/1"), topic(0), "", 202}, // a renewal
	} {
		status, body := f.PostForm(hubtest.SubscribeForm(c.topic, c.cb))
		if status != c.status || !strings.Contains(body, c.want) {
			t.Fatalf("request %d (%s): %d %q, want %d naming %q", i, c.cb, status, body, c.status, c.want)
		}
		if status == 202 {
			f.WaitActive(c.topic, c.cb)
		}
	}
	if st := f.Hub.SubscriptionLimitStats(); st.Counted != 3 || st.RefusedHub != 1 || st.RefusedHost != 1 {
		t.Errorf("stats %+v, want 3 counted, 1 refused by each limit", st)
	}
	if status, body := f.PostForm(url.Values{"hub.mode": {"unsubscribe"}, "hub.topic": {topic(1)}, "hub.callback": {byIP("/2")}}); status != 202 {
		t.Errorf("unsubscribe at the limit: %d %q", status, body)
	}

	testenv.Eventually(t, 10*time.Second, func() bool {
		_, err := f.Store.Subscription(context.Background(), hub.SubscriptionID(topic(1), byIP("/2")))
		return errors.Is(err, hub.ErrNotFound)
	}, "the unsubscription was never applied")

	g := newFixture(t, limits, func(c *hub.Config) { c.Store = f.Store })
	if status, body := g.PostForm(hubtest.SubscribeForm(topic(3), byName("/3"))); status != 202 {
		t.Fatalf("second hub on the store, 2 held: %d %q, want 202", status, body)
	}
	f.WaitActive(topic(3), byName("/3")) // f.Store is the store g shares
	if status, body := g.PostForm(hubtest.SubscribeForm(topic(4), byIP("/4"))); status != 503 {
		t.Errorf("second hub on the store, 3 held: %d %q, want 503", status, body)
	}
}
