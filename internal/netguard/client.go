package netguard

import (
	"cmp"
	"net"
	"net/http"
	"time"
)

// Timeouts bounds each phase of an outgoing request. Zero fields take the
// defaults of DefaultTimeouts.
type Timeouts struct {
	Connect        time.Duration // TCP connect, per address tried
	TLSHandshake   time.Duration
	ResponseHeader time.Duration // from request written to response headers read
	Request        time.Duration // whole request, body included (http.Client.Timeout)
	IdleConn       time.Duration // how long an idle keep-alive connection is kept
	// MaxIdleConnsPerHost is how many idle connections are kept per host;
	// it should be at least the delivery engine's per-host concurrency so
	// that fan-out to many callbacks on one host reuses connections.
	MaxIdleConnsPerHost int
	// MaxIdleConns is how many idle connections are kept in all (default
	// 4 × MaxIdleConnsPerHost, at least 256); fan-out to many callback
	// hosts reuses connections only when it covers the hosts in use.
	MaxIdleConns int
}

// DefaultTimeouts returns the timeouts used for zero fields: 5s connect,
// 5s TLS handshake, 10s to response headers, 30s per request, idle
// connections kept 90s, 64 idle connections per host.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Connect:             5 * time.Second,
		TLSHandshake:        5 * time.Second,
		ResponseHeader:      10 * time.Second,
		Request:             30 * time.Second,
		IdleConn:            90 * time.Second,
		MaxIdleConnsPerHost: 64,
	}
}

func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts()
	if t.Connect <= 0 {
		t.Connect = d.Connect
	}
	if t.TLSHandshake <= 0 {
		t.TLSHandshake = d.TLSHandshake
	}
	if t.ResponseHeader <= 0 {
		t.ResponseHeader = d.ResponseHeader
	}
	if t.Request <= 0 {
		t.Request = d.Request
	}
	if t.IdleConn <= 0 {
		t.IdleConn = d.IdleConn
	}
	if t.MaxIdleConnsPerHost <= 0 {
		t.MaxIdleConnsPerHost = d.MaxIdleConnsPerHost
	}
	return t
}

// NewClient returns an HTTP client whose every connection is checked by
// p.DialControl, bounded by t, that ignores proxy settings from the
// environment (a proxy would hide the address really reached) and never
// follows redirects: a 3xx response is returned to the caller as is.
func NewClient(p Policy, t Timeouts) *http.Client {
	t = t.withDefaults()
	dialer := &net.Dialer{
		Timeout:   t.Connect,
		KeepAlive: 30 * time.Second,
		Control:   p.DialControl,
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   t.TLSHandshake,
		ResponseHeaderTimeout: t.ResponseHeader,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       t.IdleConn,
		MaxIdleConns:          cmp.Or(t.MaxIdleConns, max(4*t.MaxIdleConnsPerHost, 256)),
		MaxIdleConnsPerHost:   t.MaxIdleConnsPerHost,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   t.Request,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
