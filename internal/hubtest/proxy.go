package hubtest

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// Proxy starts a reverse proxy on loopback in front of the hub whose base
// URL is target (a hub run as a binary, which a test cannot wrap) and
// returns the proxy's base URL, with target's path ("/" for none). Every answer the hub
// gives through it on a route of the contract is validated as Validating
// validates a handler's; an answer the proxy makes itself (502 while the
// hub is down) is not the hub's and is not validated. Event streams and
// WebSocket upgrades pass through as they go. The proxy closes when the
// test ends.
func (c *Contract) Proxy(tb testing.TB, target string) string {
	tb.Helper()
	to, err := url.Parse(target)
	if err != nil {
		tb.Fatalf("hubtest: proxy target %q: %v", target, err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: to.Scheme, Host: to.Host}) },
		FlushInterval: -1, // an event stream is answered as it goes
		ModifyResponse: func(resp *http.Response) error {
			c.checkProxied(tb, resp)
			return nil
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.covers(r.URL.Path) && r.Body != nil && r.Body != http.NoBody {
			body, _ := io.ReadAll(io.LimitReader(r.Body, maxChecked+1))
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			r = r.WithContext(context.WithValue(r.Context(), requestBodyKey{}, body))
		}
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	u := *to
	u.Scheme, u.Host = "http", srv.Listener.Addr().String()
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// requestBodyKey is the context key of the request body a proxied request
// had, for checkProxied.
type requestBodyKey struct{}

// checkProxied validates the hub's answer resp against the contract, its
// body read (up to maxChecked) and put back; an event stream, an upgrade
// and a longer body are checked for their status and header only.
func (c *Contract) checkProxied(tb testing.TB, resp *http.Response) {
	r := resp.Request
	if !c.covers(r.URL.Path) {
		return
	}
	reqBody, _ := r.Context().Value(requestBodyKey{}).([]byte)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	headOnly := resp.StatusCode == http.StatusSwitchingProtocols || mt == "text/event-stream"
	var body []byte
	if !headOnly {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, maxChecked+1))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
		if len(body) > maxChecked {
			headOnly, body = true, nil
		}
	}
	if err := c.Check(r, reqBody, resp.StatusCode, resp.Header, body, headOnly); err != nil {
		tb.Errorf("%s %s answered %d (through the validating proxy): the answer breaks the contract (admin/openapi.json): %v\n%s",
			r.Method, clip(r.URL.RequestURI()), resp.StatusCode, err, clip(string(body)))
	}
}
