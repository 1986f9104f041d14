package hubtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rshub/rshub/hub"
)

// Callback is a subscriber endpoint on loopback that answers the hub's
// verification requests (by default echoing the challenge), records them
// and accepts every delivery with 204.
type Callback struct {
	srv   *httptest.Server
	mu    sync.Mutex
	gets  []url.Values
	reply func(q url.Values) (int, string)
	// Count is the number of verification requests answered.
	Count atomic.Int64
}

// NewCallback starts a Callback; it is closed when the test ends.
func NewCallback(tb testing.TB) *Callback {
	c := &Callback{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		q := r.URL.Query()
		c.mu.Lock()
		c.gets = append(c.gets, q)
		reply := c.reply
		c.mu.Unlock()
		c.Count.Add(1)
		status, body := http.StatusOK, q.Get("hub.challenge")
		if reply != nil {
			status, body = reply(q)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	tb.Cleanup(c.srv.Close)
	return c
}

// URL is the endpoint's URL with suffix appended.
func (c *Callback) URL(suffix string) string { return c.srv.URL + suffix }

// Requests returns the query of every verification request so far.
func (c *Callback) Requests() []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]url.Values(nil), c.gets...)
}

// SetReply makes fn answer the verification requests from now on (nil:
// echo the challenge).
func (c *Callback) SetReply(fn func(q url.Values) (int, string)) {
	c.mu.Lock()
	c.reply = fn
	c.mu.Unlock()
}

// Activations is a hub.Activator that records what it is told.
type Activations struct {
	mu          sync.Mutex
	activated   []hub.Subscription
	deactivated []string
}

// Activate records s.
func (a *Activations) Activate(s hub.Subscription) {
	a.mu.Lock()
	a.activated = append(a.activated, s)
	a.mu.Unlock()
}

// Activated returns the subscriptions activated so far, in order.
func (a *Activations) Activated() []hub.Subscription {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]hub.Subscription(nil), a.activated...)
}

// Deactivate records id.
func (a *Activations) Deactivate(id string) {
	a.mu.Lock()
	a.deactivated = append(a.deactivated, id)
	a.mu.Unlock()
}

// Deactivated returns the IDs deactivated so far, in order.
func (a *Activations) Deactivated() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.deactivated...)
}
