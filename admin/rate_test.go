package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
	"github.com/rshub/rshub/internal/testenv"
	"github.com/rshub/rshub/wire"
)

// A subscription's rshub.rate is stored; the operator's rate, set with
// PATCH, wins over it, reaches the delivery engine, shows in GET and
// outlives a resubscription; 0 removes it.
func TestAdmin_PatchSubscriptionRate(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	if code, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"), wire.ParamRate, "5")); code != http.StatusAccepted {
		t.Fatalf("subscribe with %s=5: %d %s", wire.ParamRate, code, body)
	}
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	if sub.Rate != 5 {
		t.Fatalf("stored rate %v, want 5", sub.Rate)
	}
	// the subscription is stored active before the verification hands it
	// to the engine: a PATCH in between is followed by that older copy
	testenv.Eventually(t, 10*time.Second, func() bool { return len(f.Active.Activated()) > 0 }, "the subscription handed to the engine")
	get := func() hub.Subscription {
		t.Helper()
		code, body := f.adminDo(http.MethodGet, "/admin/subscriptions/"+sub.ID, "")
		var s hub.Subscription
		if err := json.Unmarshal([]byte(body), &s); code != http.StatusOK || err != nil {
			t.Fatalf("GET: %d %s %v", code, body, err)
		}
		return s
	}

	if code, body := f.adminDo(http.MethodPatch, "/admin/subscriptions/"+sub.ID, `{"rate": 0.5}`); code != http.StatusOK || !strings.Contains(body, `"operatorRate": 0.5`) {
		t.Fatalf("PATCH rate 0.5: %d %s", code, body)
	}
	if s := get(); s.Rate != 5 || s.OperatorRate != 0.5 {
		t.Fatalf("GET after PATCH: rate %v operatorRate %v, want 5 and 0.5", s.Rate, s.OperatorRate)
	}
	if acts := f.Active.Activated(); len(acts) == 0 || acts[len(acts)-1].OperatorRate != 0.5 {
		t.Fatalf("the delivery engine was not told the new rate: %+v", acts)
	}

	// a resubscription without rshub.rate keeps the operator's rate
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	testenv.Eventually(t, 10*time.Second, func() bool { s := get(); return s.Rate == 0 && s.OperatorRate == 0.5 }, "resubscribed: the subscriber's rate gone, the operator's kept")

	if code, body := f.adminDo(http.MethodPatch, "/admin/subscriptions/"+sub.ID, `{"rate": 0}`); code != http.StatusOK {
		t.Fatalf("PATCH rate 0: %d %s", code, body)
	}
	if s := get(); s.OperatorRate != 0 {
		t.Fatalf("operatorRate %v after PATCH 0, want it removed", s.OperatorRate)
	}
}

// Bad rates are refused with 400 and a reason, on subscribe and on PATCH,
// and change nothing.
func TestAdmin_BadRatesRefused(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	cb := hubtest.NewCallback(t)
	for _, bad := range []string{"0", "-1", "fast", "1e3", "20000", "0.001"} {
		code, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/bad"), wire.ParamRate, bad))
		if code != http.StatusBadRequest || !strings.Contains(body, wire.ParamRate) {
			t.Errorf("subscribe with %s=%s: %d %q, want 400 naming it", wire.ParamRate, bad, code, body)
		}
	}
	f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb")))
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	path := "/admin/subscriptions/" + sub.ID
	for _, bad := range []string{`{"rate": -1}`, `{"rate": 0.001}`, `{"rate": 1e9}`, `{"rate": "5"}`, `{}`, `{"rate": 5, "burst": 2}`, `rate=5`, `{"rate": 5} {"rate": 6}x`, `{"rate": ` + strings.Repeat("1", 5000) + `}`} {
		if code, body := f.adminDo(http.MethodPatch, path, bad); code != http.StatusBadRequest || body == "" {
			t.Errorf("PATCH %.40q: %d %q, want 400 with a reason", bad, code, body)
		}
	}
	if code, _ := f.adminDo(http.MethodPatch, "/admin/subscriptions/"+strings.Repeat("0", 32), `{"rate": 5}`); code != http.StatusNotFound {
		t.Errorf("PATCH of no subscription: %d, want 404", code)
	}
	if code, _ := f.adminDo(http.MethodPatch, "/admin/subscriptions/x", `{"rate": 5}`); code != http.StatusBadRequest {
		t.Errorf("PATCH of a malformed id: %d, want 400", code)
	}
	s, err := f.Store.Subscription(context.Background(), sub.ID)
	if err != nil || s.OperatorRate != 0 {
		t.Fatalf("after refusals: operatorRate %v %v, want none", s.OperatorRate, err)
	}
}
