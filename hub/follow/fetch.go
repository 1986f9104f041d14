package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// validators are what a conditional GET sends back: the ETag and
// Last-Modified of the last response whose content the follower used.
type validators struct {
	etag, lastModified string
}

// response is one fetched document.
type response struct {
	url         string
	notModified bool
	body        []byte
	header      http.Header
	maxAge      time.Duration // Cache-Control max-age, 0 when none
}

// StatusError is a fetch answered with a status that is not 2xx or 304.
type StatusError struct {
	URL        string
	Status     int
	RetryAfter time.Duration // what the Source asked for (429, 503), else 0
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s answered %d", clip(e.URL), e.Status)
}

// errTooLarge is a body over the hub's limit.
var errTooLarge = errors.New("document exceeds the hub's body limit")

// fetcher makes a follower's GETs through the hub's client, remembering
// validators per URL, and counts what they cost.
type fetcher struct {
	client  *http.Client
	maxBody int64
	timeout time.Duration
	now     func() time.Time
	memo    map[string]validators

	requests, notModified, bytes uint64
}

// get fetches u, conditionally when conditional is set and validators are
// known.
func (f *fetcher) get(ctx context.Context, u string, conditional bool) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return response{}, fmt.Errorf("GET %s: %w", clip(u), err)
	}
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, */*;q=0.1")
	if v, ok := f.memo[u]; ok && conditional {
		if v.etag != "" {
			req.Header.Set("If-None-Match", v.etag)
		}
		if v.lastModified != "" {
			req.Header.Set("If-Modified-Since", v.lastModified)
		}
	}
	f.requests++
	resp, err := f.client.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("GET %s: %w", clip(u), err)
	}
	defer resp.Body.Close()
	age := ParseMaxAge(resp.Header.Get("Cache-Control"))
	switch {
	case resp.StatusCode == http.StatusNotModified:
		f.notModified++
		return response{url: u, notModified: true, header: resp.Header, maxAge: age}, nil
	case resp.StatusCode/100 != 2:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return response{}, &StatusError{URL: u, Status: resp.StatusCode, RetryAfter: ParseRetryAfter(resp.Header.Get("Retry-After"), f.now())}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBody+1))
	f.bytes += uint64(len(body))
	if err != nil {
		return response{}, fmt.Errorf("GET %s: reading the body: %w", clip(u), err)
	}
	if int64(len(body)) > f.maxBody {
		return response{}, fmt.Errorf("GET %s: %w (%d bytes)", clip(u), errTooLarge, f.maxBody)
	}
	return response{url: u, body: body, header: resp.Header, maxAge: age}, nil
}

// keep remembers the validators of a response whose content was used, so
// the next GET of its URL is conditional.
func (f *fetcher) keep(r response) {
	if r.notModified {
		return
	}
	v := validators{etag: r.header.Get("ETag"), lastModified: r.header.Get("Last-Modified")}
	if v == (validators{}) {
		delete(f.memo, r.url)
		return
	}
	f.memo[r.url] = v
}

// clip shortens a URL for messages.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
