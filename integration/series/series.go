// Package series is the numbered series of change notifications the
// integration load tests publish (notification n covers one second of 2024
// and names resource n) and the subscriber callback that records the
// numbers it receives, to check that every acknowledged one arrived, in
// order.
package series

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// Notification is notification n of the series.
func Notification(n int) string {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	from, until := base.Add(time.Duration(n)*time.Second), base.Add(time.Duration(n+1)*time.Second)
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>http://example.com/n/%d</loc><rs:md change="updated" datetime="%s"/></url>
</urlset>
`, from.Format(time.RFC3339), until.Format(time.RFC3339), n, from.Add(time.Second/2).Format(time.RFC3339Nano))
}

var locNum = regexp.MustCompile(`<loc>http://example\.com/n/(\d+)</loc>`)

// Receiver is a subscriber callback: it echoes verification challenges and
// records the notification numbers it receives, in arrival order.
type Receiver struct {
	mu       sync.Mutex
	got      []int
	times    []time.Time
	verified bool
}

// ServeHTTP answers a verification request with its challenge and a
// delivery with 204, recording its numbers.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		_, _ = io.WriteString(w, req.URL.Query().Get("hub.challenge"))
		r.mu.Lock()
		r.verified = true
		r.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(req.Body)
	now := time.Now()
	r.mu.Lock()
	for _, m := range locNum.FindAllSubmatch(body, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		r.got = append(r.got, n)
		r.times = append(r.times, now)
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Verified reports whether it has echoed a challenge (its subscription's
// start is fixed).
func (r *Receiver) Verified() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.verified
}

// Check returns the distinct numbers received and whether their first
// arrivals were in increasing order (a repeated delivery is allowed).
func (r *Receiver) Check() (distinct map[int]bool, ordered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	distinct, ordered, last := map[int]bool{}, true, -1
	for _, n := range r.got {
		if distinct[n] {
			continue
		}
		distinct[n] = true
		ordered = ordered && n > last
		last = n
	}
	return distinct, ordered
}

// Missing returns the numbers of want not received yet.
func (r *Receiver) Missing(want []int) []int {
	got, _ := r.Check()
	var missing []int
	for _, n := range want {
		if !got[n] {
			missing = append(missing, n)
		}
	}
	return missing
}

// StallAfter is how long after t the receiver got its next notification
// (-1: none yet).
func (r *Receiver) StallAfter(t time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, at := range r.times {
		if at.After(t) {
			return at.Sub(t)
		}
	}
	return -1
}
