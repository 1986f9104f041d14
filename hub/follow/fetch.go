package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

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

// TimeoutError is a fetch that did not end within the fetch bound (Bound,
// Config.FetchTimeout or ten poll intervals): the Source did not answer,
// or, with Body set, its body did not arrive whole (Read bytes of it
// came). Nothing of such a document is used.
type TimeoutError struct {
	URL   string
	Bound time.Duration
	Body  bool
	Read  int64
}

func (e *TimeoutError) Error() string {
	if e.Body {
		return fmt.Sprintf("GET %s: the body did not arrive whole within %s, the fetch bound (%d bytes came): nothing of it is used", clip(e.URL), e.Bound, e.Read)
	}
	return fmt.Sprintf("GET %s: no answer within %s, the fetch bound", clip(e.URL), e.Bound)
}

// Unwrap makes a TimeoutError a context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// errTooLarge is a body over the hub's limit.
var errTooLarge = errors.New("document exceeds the hub's body limit")

// fetcher makes a follower's GETs through the hub's client, remembering
// validators per URL, and counts what they cost.
type fetcher struct {
	client  *http.Client
	maxBody int64
	timeout time.Duration
	now     func() time.Time
	memo    map[string]Validators

	requests, notModified, bytes uint64
	timeouts                     uint64 // fetches past the bound
}

// get fetches u, conditionally when conditional is set and validators are
// known, and reads its body (at most maxBody bytes).
func (f *fetcher) get(ctx context.Context, u string, conditional bool) (response, error) {
	resp, body, err := f.open(ctx, u, conditional)
	if err != nil || body == nil {
		return resp, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return response{}, err
	}
	resp.body = b
	return resp, nil
}

// open starts fetching u like get and returns the body to stream (nil for
// a 304), limited to maxBody bytes: reading past it fails with
// errTooLarge. Closing the body ends the request.
func (f *fetcher) open(parent context.Context, u string, conditional bool) (response, io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(parent, f.timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return response{}, nil, fmt.Errorf("GET %s: %w", clip(u), err)
	}
	req.Header.Set("Accept", "application/xml, text/xml;q=0.9, */*;q=0.1")
	if v, ok := f.memo[u]; ok && conditional {
		if v.ETag != "" {
			req.Header.Set("If-None-Match", v.ETag)
		}
		if v.LastModified != "" {
			req.Header.Set("If-Modified-Since", v.LastModified)
		}
	}
	f.requests++
	resp, err := f.client.Do(req)
	if err != nil {
		cancel()
		if f.timedOut(parent, ctx) {
			return response{}, nil, &TimeoutError{URL: u, Bound: f.timeout}
		}
		return response{}, nil, fmt.Errorf("GET %s: %w", clip(u), err)
	}
	age := ParseMaxAge(resp.Header.Get("Cache-Control"))
	switch {
	case resp.StatusCode == http.StatusNotModified:
		f.notModified++
		resp.Body.Close()
		cancel()
		return response{url: u, notModified: true, header: resp.Header, maxAge: age}, nil, nil
	case resp.StatusCode/100 != 2:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		cancel()
		return response{}, nil, &StatusError{URL: u, Status: resp.StatusCode, RetryAfter: ParseRetryAfter(resp.Header.Get("Retry-After"), f.now())}
	}
	body := &limitedBody{f: f, u: u, r: resp.Body, left: f.maxBody, parent: parent, ctx: ctx, cancel: cancel}
	return response{url: u, header: resp.Header, maxAge: age}, body, nil
}

// timedOut reports whether a fetch's context (ctx, made from parent) ended
// at the fetch bound, and counts it: not the poll's end.
func (f *fetcher) timedOut(parent, ctx context.Context) bool {
	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		f.timeouts++
		return true
	}
	return false
}

// limitedBody is a response body that counts its bytes into the fetcher's
// and fails past the body limit.
type limitedBody struct {
	f           *fetcher
	u           string
	r           io.ReadCloser
	left, read  int64
	parent, ctx context.Context // the poll's, the fetch's (bounded)
	cancel      context.CancelFunc
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.f.bytes += uint64(n)
	b.left -= int64(n)
	b.read += int64(n)
	if b.left < 0 {
		return n, fmt.Errorf("GET %s: %w (%d bytes)", clip(b.u), errTooLarge, b.f.maxBody)
	}
	if err != nil && err != io.EOF {
		if b.f.timedOut(b.parent, b.ctx) {
			return n, &TimeoutError{URL: b.u, Bound: b.f.timeout, Body: true, Read: b.read}
		}
		err = fmt.Errorf("GET %s: reading the body: %w", clip(b.u), err)
	}
	return n, err
}

func (b *limitedBody) Close() error {
	err := b.r.Close()
	b.cancel()
	return err
}

// keep remembers the validators of a response whose content was used, so
// the next GET of its URL is conditional: those TrustedValidators keeps,
// none when it keeps none.
func (f *fetcher) keep(r response) {
	if r.notModified {
		return
	}
	v := TrustedValidators(r.header)
	if v == (Validators{}) {
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
