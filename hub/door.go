package hub

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// The door step. Every request that names a channel is resolved once,
// where it enters, into a Door: the channel (or its absence) and the
// caller's grant, one value the rest of the flow reads instead of looking
// the channel up and checking tokens again along the way. A private
// channel the caller has no grant for comes out of the step exactly as a
// channel that does not exist (Found false; Hidden says so, for the one
// place that must act on it without telling: see thinPing and runVerify),
// so no later step can give it away.
//
// The hub URL's doors (subscribe, fat ping, thin ping) enter with enter,
// a hosted topic with enterChannel; pull-mode documents (hub/pull) and
// live sessions (live) with Enter: every one of them through enterAs.

// Door is what the door step resolved of a request naming one channel.
type Door struct {
	// Channel is the channel the request names; the zero Channel when
	// Found is false.
	Channel Channel
	// Format is FormatAtom when a subscription names the channel's feed
	// URL, else "".
	Format string
	// Found: the channel exists and the caller may know it.
	Found bool
	// Hidden: the channel exists, but is private and the caller has no
	// grant for it; Found is false and Channel is zero, as for a channel
	// the hub does not serve.
	Hidden bool
	// Authorized: the caller was admitted to a private channel, by Grant
	// (its token's; the zero Grant when it showed the channel's own
	// publisher token).
	Authorized bool
	Grant      access.Grant
	// framework: a publish names a framework channel (frameworkParent),
	// whose notifications are validated as framework notifications.
	framework bool
}

// Enter is the door step of a request that reads channel ch (found says
// whether it exists), for the doors outside this package: pull-mode
// documents and live sessions. v verifies readers' tokens (nil hides every
// private channel); skipBearer is as for access.TokenFrom. It returns the
// Door, or the refusal to answer with: 401 for a token that does not
// verify (whether the channel exists or not), 403 for one without the
// subscribe grant (mercure.subscribe claim or authorization_details) for an
// existing private channel. A private
// channel without a token, or with a token that verifies, but for a
// channel that does not exist, comes out as not Found: the door answers
// as for a channel it does not serve.
func Enter(ctx context.Context, v *access.Verifier, r *http.Request, ch Channel, found bool, skipBearer string) (Door, *access.Refusal) {
	return enterAs(ctx, v, r, access.Subscribe, ch, found, skipBearer)
}

// enterAs is the door step's token check for action a (Enter).
func enterAs(ctx context.Context, v *access.Verifier, r *http.Request, a access.Action, ch Channel, found bool, skipBearer string) (Door, *access.Refusal) {
	if found && !ch.Private {
		return Door{Channel: ch, Found: true}, nil // a public channel: tokens are not looked at
	}
	g, ref := v.Door(ctx, r, a, found, ch.Private, ch.Topic, skipBearer)
	switch {
	case ref == nil:
		return Door{Channel: ch, Found: true, Grant: g, Authorized: true}, nil
	case ref.NotFound():
		return Door{Hidden: found}, nil
	}
	return Door{}, ref
}

// enter is the door step of a request to the hub URL that does a with
// topic (normalised, see topicurl.go): a subscription names a channel's
// topic or its feed URL, a publish a channel's topic. It returns the Door,
// or the refusal to answer with: 401 for a token that does not verify
// (whether the channel exists or not), 403 for one without the claim, 403
// origin for a token in the cookie sent from a page of another origin
// (checkCookieOrigin), 503 when the store does not answer.
func (h *Hub) enter(ctx context.Context, r *http.Request, a access.Action, topic string) (Door, error) {
	var ch Channel
	var err error
	format := ""
	if name := h.feedChannel(topic); name != "" && a == access.Subscribe {
		ch, err = h.ChannelByName(ctx, name)
		format = FormatAtom
	} else {
		ch, err = h.lookupChannel(ctx, topic)
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Door{}, unavailable("the state store", err)
	}
	d, err := h.enterChannel(ctx, r, a, ch, err == nil)
	if err != nil || !d.Found {
		return d, err
	}
	d.Format = format
	if a == access.Publish {
		if d.framework, err = h.isFrameworkChannel(ctx, d.Channel); err != nil {
			return Door{}, unavailable("the state store", err)
		}
	}
	return d, nil
}

// enterChannel is the door step of a request to the hub (the hub URL, a
// hosted topic) for a channel already looked up (found says whether it
// exists): Enter's, with the publisher verifier for a publish, which also
// takes a private channel's own token (trust token), and, for a request
// that changes something, the cookie's origin rule (checkCookieOrigin).
func (h *Hub) enterChannel(ctx context.Context, r *http.Request, a access.Action, ch Channel, found bool) (Door, error) {
	if found && !ch.Private {
		return Door{Channel: ch, Found: true}, nil // a public channel: tokens are not looked at
	}
	if found && a == access.Publish && ch.Trust == TrustToken {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(ch.Token)) == 1 {
			return Door{Channel: ch, Found: true, Authorized: true}, nil // the channel's own token
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead { // a request that changes something
		if err := h.checkCookieOrigin(r); err != nil {
			return Door{}, err
		}
	}
	v := h.cfg.Subscribers
	if a == access.Publish {
		v = h.cfg.Publishers
	}
	d, ref := enterAs(ctx, v, r, a, ch, found, "")
	if ref != nil {
		return Door{}, tokenRefusal(ref)
	}
	return d, nil
}

// checkCookieOrigin refuses (403 origin) a request to the hub URL whose
// token is the mercureAuthorization cookie's (access.TokenFrom) unless it
// comes from a page of the hub's own origin or of one of CookieOrigins,
// as its Origin header (else its Referer) says: a browser sends the cookie
// with a form a page of any site posts, without a preflight, so without
// this a page elsewhere could make its visitor's browser publish or
// subscribe. "*" in CookieOrigins does not count, and a request that says
// no origin is refused. A token in the Authorization header or the query
// is not the browser's to add, and passes.
func (h *Hub) checkCookieOrigin(r *http.Request) error {
	if r.URL.Query().Get(access.QueryParam) != "" {
		return nil
	}
	if c, err := r.Cookie(access.CookieName); err != nil || c.Value == "" {
		return nil
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		origin = r.Header.Get("Referer")
	}
	o := originOf(origin)
	if o != "" {
		if o == h.origin() {
			return nil
		}
		if u, err := url.Parse(o); err == nil && strings.EqualFold(u.Host, r.Host) {
			return nil
		}
		for _, allowed := range h.cfg.CookieOrigins {
			if allowed != "*" && originOf(allowed) == o {
				return nil
			}
		}
	}
	return refuse(ReasonOrigin, "a request the %s cookie authorises must come from a page of this hub's origin or of --ws-origins; Origin %q is neither", access.CookieName, wire.Clip(origin))
}
