package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Ping kinds of the webhook scenarios (--ping).
const (
	PingFat  = "fat"  // the publisher POSTs the notification to the hub
	PingThin = "thin" // it POSTs hub.mode=publish&hub.url=<topic>; the hub GETs the notification
)

// source is a loopback Source serving one topic: its latest change
// notification, with an ETag, for a hub that takes thin pings to GET.
type source struct {
	URL  string // the topic URI
	srv  *http.Server
	mu   sync.Mutex
	body []byte
	etag string
}

func startSource() (*source, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	s := &source{URL: "http://" + ln.Addr().String() + "/source/topic"}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	goLabelled("source", func() { _ = s.srv.Serve(ln) })
	return s, nil
}

func (s *source) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	body, etag := s.body, s.etag
	s.mu.Unlock()
	if body == nil {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("ETag", etag)
	_, _ = w.Write(body)
}

// set makes body, notification id, the topic's content.
func (s *source) set(id int, body []byte) {
	s.mu.Lock()
	s.body, s.etag = body, `"`+strconv.Itoa(id)+`"`
	s.mu.Unlock()
}

func (s *source) close() { _ = s.srv.Close() }

// thinPublisher publishes by thin ping: it puts the notification on the
// Source, then pings the hub, whose answer comes once it fetched and
// stored it; notifications follow in Source time as the fat publisher's.
type thinPublisher struct {
	client *http.Client
	hubURL string
	src    *source
	next   time.Time
}

func newThinPublisher(h *hubProc, src *source) *thinPublisher {
	return &thinPublisher{
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
		hubURL: h.URL, src: src,
		next: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// publish is publisher.publish by thin ping.
func (p *thinPublisher) publish(ctx context.Context, id int) (time.Time, error) {
	sent := time.Now()
	p.src.set(id, notification(id, sent, p.next))
	form := url.Values{"hub.mode": {"publish"}, "hub.url": {p.src.URL}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.hubURL, strings.NewReader(form.Encode()))
	if err != nil {
		return sent, fmt.Errorf("thin ping %d: %w", id, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(req)
	if err != nil {
		return sent, fmt.Errorf("thin ping %d: %w", id, err)
	}
	msg := drain(resp)
	if resp.StatusCode != http.StatusOK {
		return sent, fmt.Errorf("thin ping %d: hub answered %d: %s", id, resp.StatusCode, msg)
	}
	if !strings.Contains(msg, "stored") {
		return sent, errors.New("thin ping " + strconv.Itoa(id) + ": hub stored nothing: " + msg)
	}
	p.next = p.next.Add(time.Second)
	return sent, nil
}
