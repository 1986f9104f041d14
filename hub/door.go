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
// where it enters, into a door: the channel (or its absence) and the
// caller's grant, one value the rest of the flow reads instead of looking
// the channel up and checking tokens again along the way. A private
// channel the caller has no grant for comes out of the step exactly as a
// channel that does not exist (found false; hidden says so, for the one
// place that must act on it without telling: see thinPing and runVerify),
// so no later step can give it away.
//
// The hub URL's doors (subscribe, fat ping, thin ping) enter with enter,
// a hosted topic with enterChannel. Pull-mode documents (hub/pull's admit)
// and live sessions (live's admitPrivate) make the same one check
// (access.Verifier.Door) at their own door.

// door is what the door step resolved of a request naming one channel.
type door struct {
	// ch is the channel the request names; the zero Channel when found is
	// false.
	ch Channel
	// format is FormatAtom when a subscription names the channel's feed
	// URL, else "".
	format string
	// found: the channel exists and the caller may know it.
	found bool
	// hidden: the channel exists, but is private and the caller has no
	// grant for it; found is false and ch is zero, as for a topic the hub
	// does not serve.
	hidden bool
	// grant is the caller's grant for a private channel: its token's,
	// or the zero Grant when it showed the channel's own token. authorized
	// says whether it was admitted to a private channel.
	grant      access.Grant
	authorized bool
}

// enter is the door step of a request to the hub URL that does a with
// topic (normalised, see topicurl.go): a subscription names a channel's
// topic or its feed URL, a publish a channel's topic. It returns the door,
// or the refusal to answer with: 401 for a token that does not verify
// (whether the channel exists or not), 403 for one without the claim, 403
// origin for a token in the cookie sent from a page of another origin,
// 503 when the store does not answer.
func (h *Hub) enter(ctx context.Context, r *http.Request, a access.Action, topic string) (door, error) {
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
		return door{}, unavailable("the state store", err)
	}
	d, err := h.enterChannel(ctx, r, a, ch, err == nil)
	if d.found {
		d.format = format
	}
	return d, err
}

// enterChannel is the door step for a channel already looked up (found
// says whether it exists): see door and enter.
func (h *Hub) enterChannel(ctx context.Context, r *http.Request, a access.Action, ch Channel, found bool) (door, error) {
	if found && !ch.Private {
		return door{ch: ch, found: true}, nil // a public channel: tokens are not looked at
	}
	if found && a == access.Publish && ch.Trust == TrustToken {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(tok), []byte(ch.Token)) == 1 {
			return door{ch: ch, found: true, authorized: true}, nil // the channel's own token
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead { // a request that changes something
		if err := h.checkCookieOrigin(r); err != nil {
			return door{}, err
		}
	}
	v := h.cfg.Subscribers
	if a == access.Publish {
		v = h.cfg.Publishers
	}
	g, ref := v.Door(ctx, r, a, found, ch.Private, ch.Topic, "")
	switch {
	case ref == nil:
		return door{ch: ch, found: true, grant: g, authorized: true}, nil
	case ref.NotFound():
		return door{hidden: found}, nil
	}
	return door{}, tokenRefusal(ref)
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
	return refuse(reasonOrigin, "a request the %s cookie authorises must come from a page of this hub's origin or of --ws-origins; Origin %q is neither", access.CookieName, wire.Clip(origin))
}
