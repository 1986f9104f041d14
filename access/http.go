package access

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Where a request carries its token, as Mercure reads it.
const (
	// CookieName is the cookie browsers carry the token in.
	CookieName = "mercureAuthorization"
	// QueryParam is the query parameter of clients that can set neither a
	// header nor a cookie (EventSource, WebSocket in browsers).
	QueryParam = "authorization"
)

// TokenFrom returns the token a request carries: the query parameter
// "authorization", else the cookie mercureAuthorization, else the
// Authorization header's Bearer credentials unless they equal skipBearer
// (a door whose Bearer credentials mean something else passes them).
// It returns "" when the request carries none.
func TokenFrom(r *http.Request, skipBearer string) string {
	if t := r.URL.Query().Get(QueryParam); t != "" {
		return t
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		return c.Value
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && t != "" && (skipBearer == "" || t != skipBearer) {
		return t
	}
	return ""
}

// Refusal is a door's answer to a caller a private channel refuses.
type Refusal struct {
	Status int    // 401, 403 or 404
	Reason string // for the body and the error_description
}

// Error returns the reason.
func (r *Refusal) Error() string { return r.Reason }

// NotFound reports whether the door should answer as it answers for a
// channel that does not exist.
func (r *Refusal) NotFound() bool { return r.Status == http.StatusNotFound }

// Header sets the RFC 6750 WWW-Authenticate header of a 401 or 403.
func (r *Refusal) Header(h http.Header) {
	desc := strings.NewReplacer(`"`, "'", `\`, "/").Replace(r.Reason)
	switch r.Status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="rshub", error="invalid_token", error_description=%q`, desc))
	case http.StatusForbidden:
		h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="rshub", error="insufficient_scope", error_description=%q`, desc))
	}
}

// Write answers the refusal as plain text with its header; a NotFound
// refusal is the door's own 404, so Write is for 401 and 403.
func (r *Refusal) Write(w http.ResponseWriter) {
	r.Header(w.Header())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(r.Status)
	_, _ = fmt.Fprintln(w, r.Reason)
}

// Check decides whether the caller of r may do a with topic, which is a
// private channel's topic, or "" for a channel that does not exist (so a
// caller cannot tell the two apart without a grant for the topic). It
// returns the grant, or the refusal: 404 without a token, 401 for a token
// that does not verify, 403 naming the claim a verified token lacks, 404
// for a channel that does not exist. skipBearer is as for TokenFrom.
func (v *Verifier) Check(ctx context.Context, r *http.Request, a Action, topic, skipBearer string) (Grant, *Refusal) {
	raw := TokenFrom(r, skipBearer)
	if raw == "" {
		return Grant{}, &Refusal{Status: http.StatusNotFound, Reason: "no token"}
	}
	g, err := v.Verify(ctx, raw)
	if err != nil {
		return Grant{}, &Refusal{Status: http.StatusUnauthorized, Reason: err.Error()}
	}
	if topic == "" {
		return Grant{}, &Refusal{Status: http.StatusNotFound, Reason: "no such channel"}
	}
	if !g.Allows(a, topic) {
		return Grant{}, &Refusal{Status: http.StatusForbidden, Reason: fmt.Sprintf("the token grants no %s on this channel's topic (neither its %s claim nor its authorization_details cover it)", a.action(), a.Claim())}
	}
	return g, nil
}

// GrantFrom returns the grant of the token r carries, or the zero Grant
// (which allows nothing) when it carries none or one that does not verify:
// for listings (the Source Description, robots.txt), which leave out what
// the caller may not read and never refuse.
func (v *Verifier) GrantFrom(ctx context.Context, r *http.Request) Grant {
	raw := TokenFrom(r, "")
	if raw == "" || v == nil {
		return Grant{}
	}
	g, err := v.Verify(ctx, raw)
	if err != nil {
		return Grant{}
	}
	return g
}

// Door is the check of every door that serves one channel: found says the
// channel exists, private that it is private, topic is its topic. It
// returns nil to serve a public channel (tokens are not looked at) or a
// private one to a token covering topic; otherwise the Refusal, NotFound
// when the caller shows no token or a token that verifies (the door then
// answers as for a channel that does not exist, so that a caller cannot
// tell the two apart), 401 for a token that does not verify, whether the
// channel exists or not, and 403 for a token without the claim for an
// existing private channel. A nil Verifier hides every private channel.
func (v *Verifier) Door(ctx context.Context, r *http.Request, a Action, found, private bool, topic, skipBearer string) (Grant, *Refusal) {
	notFound := &Refusal{Status: http.StatusNotFound, Reason: "no such channel"}
	switch {
	case found && !private:
		return Grant{}, nil
	case v == nil:
		return Grant{}, notFound
	case !found:
		topic = ""
	}
	return v.Check(ctx, r, a, topic, skipBearer)
}
