package admin_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/rshub/rshub/admin"
	"github.com/rshub/rshub/delivery"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/follow"
	"github.com/rshub/rshub/internal/hubtest"
)

// stubFollows answers as a follower engine whose store holds one status.
type stubFollows struct{ st follow.Status }

func (s stubFollows) Status(_ context.Context, ch hub.Channel) (follow.Status, error) {
	if ch.Name != s.st.Channel {
		return follow.Status{}, hub.ErrNotFound
	}
	return s.st, nil
}
func (s stubFollows) Statuses(context.Context) ([]follow.Status, error) {
	return []follow.Status{s.st}, nil
}
func (s stubFollows) PollNow(name string) bool { return name == s.st.Channel }

// contract is the admin API's OpenAPI document as the hub serves it, and
// a router over it.
type contract struct {
	doc    *openapi3.T
	router routers.Router
	seen   map[string]bool // "METHOD /path template" answered and checked
}

func loadContract(t *testing.T, f *fixture) *contract {
	t.Helper()
	resp, err := http.Get(f.Server.URL + "/admin/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /admin/openapi.json: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("the contract does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the contract is not a valid OpenAPI document: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	doc.Servers = openapi3.Servers{{URL: f.Server.URL}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &contract{doc: doc, router: router, seen: map[string]bool{}}
}

// check sends req and validates the answer against the contract: the
// route, the status, the content type and the body's schema.
func (c *contract) check(t *testing.T, req *http.Request, wantStatus int) []byte {
	t.Helper()
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s: %d %s, want %d", req.Method, req.URL.Path, resp.StatusCode, body, wantStatus)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in the contract: %v", req.Method, req.URL.Path, err)
	}
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	// a refusal's request breaks the contract on purpose
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && wantStatus < 400 {
		t.Errorf("%s %s: the request breaks the contract: %v", req.Method, req.URL.Path, err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s %d: the answer breaks the contract: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	c.seen[req.Method+" "+route.Path] = true
	return body
}

func (c *contract) admin(t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.check(t, req, want)
}

// Every admin route answers as the contract says, for its successes and
// its refusals; the contract names no admin route that was not checked.
func TestOpenAPI_EveryAdminRouteAnswersAsTheContractSays(t *testing.T) {
	stats := []delivery.SubStats{{ID: "s1", Topic: "http://127.0.0.1:1/t", Channel: "t", Callback: "http://127.0.0.1:2/cb", State: "active",
		Host: "127.0.0.1:2", HostBreaker: "closed", Cursor: hub.Cursor{Seq: 3}, LastAttempt: time.Now()}}
	followed := follow.Status{Channel: "pulled", Source: "http://127.0.0.1:3/", Validation: "lenient", Interval: "1m0s",
		Plan:  follow.Plan{CapabilityList: "http://127.0.0.1:3/cl.xml", ChangeList: "http://127.0.0.1:3/cl/open.xml"},
		Owner: "hub-a", Updated: time.Now(), ClaimExpires: time.Now().Add(30 * time.Second), Polls: 4, Requests: 9, Errors: 1,
		LastGap: &hub.Gap{From: time.Now().Add(-time.Hour), Until: time.Now(), Seq: 7, Recorded: time.Now()}, LastError: "503 Service Unavailable",
		Leniencies: []follow.LeniencyCount{{Rule: "absolute-uri", Count: 2, Last: time.Now(), Msg: "relative loc"}}}
	f := newFixture(t, func(_ *hub.Config, a *admin.Config) {
		a.Deliveries = stubDeliveries{stats: stats}
		a.Follows = stubFollows{followed}
	})
	c := loadContract(t, f)
	ctx := context.Background()
	base := f.Server.URL

	cb := hubtest.NewCallback(t)
	ch := f.Channel(hub.Channel{Name: "docs", Topic: "http://127.0.0.1:1/docs", Trust: hub.TrustOpen})
	if code, body := f.PostForm(hubtest.SubscribeForm(ch.Topic, cb.URL("/cb"))); code != http.StatusAccepted {
		t.Fatalf("subscribe: %d %s", code, body)
	}
	sub := f.WaitActive(ch.Topic, cb.URL("/cb"))
	if err := f.Store.AddDeadLetter(ctx, hub.DeadLetter{ID: "dl1", SubID: sub.ID, Seq: 1, Attempts: 3, LastStatus: 500, Reason: "500", Failed: time.Now()}); err != nil {
		t.Fatal(err)
	}

	c.admin(t, http.MethodPost, base+"/admin/channels", `{"name": "made", "topic": "http://127.0.0.1:1/made", "trust": "open"}`, http.StatusCreated)
	c.admin(t, http.MethodPost, base+"/admin/channels", `{"name": "rshub", "topic": "http://127.0.0.1:1/r", "trust": "open"}`, http.StatusBadRequest)
	c.admin(t, http.MethodPost, base+"/admin/channels", `{"name": "made", "topic": "http://127.0.0.1:1/other", "trust": "open"}`, http.StatusConflict)
	c.admin(t, http.MethodPost, base+"/admin/channels", `{"name": "made", "topic": "http://127.0.0.1:1/made", "trust": "token", "token": "another-token-of-16"}`, http.StatusConflict)
	c.admin(t, http.MethodPut, base+"/admin/channels/made", `{"topic": "http://127.0.0.1:1/made", "trust": "token", "token": "another-token-of-16"}`, http.StatusOK)
	c.admin(t, http.MethodPut, base+"/admin/channels/put", `{"name": "put", "topic": "http://127.0.0.1:1/put", "trust": "open"}`, http.StatusCreated)
	c.admin(t, http.MethodPut, base+"/admin/channels/put", `{"name": "other", "topic": "http://127.0.0.1:1/put", "trust": "open"}`, http.StatusBadRequest)
	c.admin(t, http.MethodPut, base+"/admin/channels/put", `{"topic": "http://127.0.0.1:1/made", "trust": "open"}`, http.StatusConflict)
	c.admin(t, http.MethodGet, base+"/admin/channels?limit=1", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/channels?limit=0", "", http.StatusBadRequest)
	c.admin(t, http.MethodGet, base+"/admin/channels/docs", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/channels/nope", "", http.StatusNotFound)
	c.admin(t, http.MethodGet, base+"/admin/channels/docs/continuity", "", http.StatusOK)
	c.admin(t, http.MethodPost, base+"/admin/channels/docs/continuity/reset", `{}`, http.StatusOK)
	c.admin(t, http.MethodPost, base+"/admin/channels/docs/follow/poll", "", http.StatusConflict)
	f.Channel(hub.Channel{Name: "pulled", Follow: "http://127.0.0.1:3/", PollInterval: "1m", Validation: hub.ValidationLenient})
	c.admin(t, http.MethodGet, base+"/admin/channels/pulled", "", http.StatusOK)
	c.admin(t, http.MethodPost, base+"/admin/channels/pulled/follow/poll", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions?"+url.Values{"topic": {ch.Topic}}.Encode(), "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions/"+sub.ID, "", http.StatusOK)
	c.admin(t, http.MethodPatch, base+"/admin/subscriptions/"+sub.ID, `{"rate": 2.5}`, http.StatusOK)
	c.admin(t, http.MethodPatch, base+"/admin/subscriptions/"+sub.ID, `{"rate": -1}`, http.StatusBadRequest)
	c.admin(t, http.MethodPatch, base+"/admin/subscriptions/"+strings.Repeat("0", 32), `{"rate": 1}`, http.StatusNotFound)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions/"+sub.ID, "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions/"+sub.ID+"/deadletters", "", http.StatusOK)
	c.admin(t, http.MethodPost, base+"/admin/subscriptions/"+sub.ID+"/deadletters/dl1/redrive", "", http.StatusCreated)
	if err := f.Store.AddAttempts(ctx, []hub.Attempt{
		{SubID: sub.ID, Time: time.Now(), Seq: 1, Attempt: 1, Status: 503, LatencyMS: 1.5, Headers: map[string]string{"Retry-After": "7"},
			Body: "busy", Error: "callback answered 503 Service Unavailable", NextRetry: time.Now().Add(time.Second)},
		{SubID: sub.ID, Time: time.Now(), Seq: 1, Attempt: 2, Status: 204, LatencyMS: 0.4},
	}); err != nil {
		t.Fatal(err)
	}
	c.admin(t, http.MethodGet, base+"/admin/subscriptions/"+sub.ID+"/attempts?limit=1", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions/"+sub.ID+"/attempts?status=5xx", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/subscriptions/"+sub.ID+"/attempts?status=teapot", "", http.StatusBadRequest)
	c.admin(t, http.MethodGet, base+"/admin/deliveries", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/deliveries?status=failing", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/deliveries/hosts", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/summary", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/follow", "", http.StatusOK)
	c.admin(t, http.MethodGet, base+"/admin/quarantine", "", http.StatusOK)
	c.admin(t, http.MethodDelete, base+"/admin/subscriptions/"+sub.ID, "", http.StatusNoContent)
	c.admin(t, http.MethodDelete, base+"/admin/channels/made", "", http.StatusNoContent)
	noToken, _ := http.NewRequest(http.MethodGet, base+"/admin/summary", nil)
	c.check(t, noToken, http.StatusUnauthorized)
	doc, _ := http.NewRequest(http.MethodGet, base+"/admin/openapi.json", nil)
	c.check(t, doc, http.StatusOK)

	var missed []string
	for path, item := range c.doc.Paths.Map() {
		if !strings.HasPrefix(path, "/admin/") {
			continue
		}
		for method := range item.Operations() {
			if !c.seen[method+" "+path] {
				missed = append(missed, method+" "+path)
			}
		}
	}
	slices.Sort(missed)
	if len(missed) > 0 {
		t.Errorf("admin routes in the contract never checked: %q", missed)
	}
}
