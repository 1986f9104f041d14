package hubtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// Receiver is a webhook destination on loopback that answers the hub's
// verification by echoing the challenge and records every change
// notification delivered to it: its entries, in order, and whether the
// notifications are contiguous (each one's from the previous one's until).
// A from before the previous until, or a body that is no change
// notification, is an error; a from after it is a gap.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	entries  []changefeed.Entry
	lastTill time.Time
	errs     []string
	gaps     int
	verified bool
}

// NewReceiver starts a Receiver; it is closed when the test ends.
func NewReceiver(tb testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		r.mu.Lock()
		r.verified = true
		r.mu.Unlock()
		_, _ = io.WriteString(w, req.URL.Query().Get("hub.challenge"))
		return
	}
	body, _ := io.ReadAll(req.Body)
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{})
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, err.Error())
		return
	}
	switch from := doc.MD.From.Time; {
	case r.lastTill.IsZero() || from.Equal(r.lastTill):
	case from.After(r.lastTill):
		r.gaps++
	default:
		r.errs = append(r.errs, fmt.Sprintf("from %s is before the previous until %s", from, r.lastTill))
	}
	r.lastTill = doc.MD.Until.Time
	r.entries = append(r.entries, doc.Entries...)
}

// URL is the destination's callback URL.
func (r *Receiver) URL() string { return r.srv.URL }

// Entries returns every entry received so far, in order.
func (r *Receiver) Entries() []changefeed.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]changefeed.Entry(nil), r.entries...)
}

// Errors returns what was wrong with the notifications received so far.
func (r *Receiver) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// Gaps returns how many notifications began after the previous one's until.
func (r *Receiver) Gaps() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gaps
}

// Verified reports whether a verification request was answered.
func (r *Receiver) Verified() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.verified
}
