package live

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// Private channels (hub.Channel.Private) in live sessions. A session
// naming a private channel needs a token whose grant (its mercure.subscribe
// claim or its authorization_details, access.Verifier.Verify)
// covers the channel's topic (access.TokenFrom: the "authorization" query
// parameter, the mercureAuthorization cookie, or Authorization: Bearer
// when it is not the --ws-token): a bad token is refused with 401, a
// verified one without the claim with 403; without a token the channel is
// treated as one that does not exist yet (the session opens and receives
// nothing of it). A channels=* session receives the private channels its
// token covers. Every record is checked when written, so a channel made
// private stops reaching the sessions it is no longer for; a session a
// token admitted to a private channel ends when the token expires, with
// wire.CloseTokenExpired (the Server-Sent Events end event carries the
// same code).

// Channels finds a channel by name; *hub.Hub implements it.
type Channels interface {
	ChannelByName(ctx context.Context, name string) (hub.Channel, error)
}

// admitPrivate checks the session's token against the private channels it
// names and records its grant in req; it answers a refused request itself.
func (ls *Sessions) admitPrivate(w http.ResponseWriter, r *http.Request, req *wsRequest) bool {
	if ls.cfg.Channels == nil {
		return true
	}
	ctx := r.Context()
	if req.all { // a listing of every channel: a bad token shows no private one, as in the Source Description
		if tok := access.TokenFrom(r, ls.cfg.Token); tok != "" && ls.cfg.Readers != nil {
			if g, err := ls.cfg.Readers.Verify(ctx, tok); err == nil {
				req.grant, req.expires = g, g.Expires
			}
		}
		return true
	}
	for _, name := range req.channels {
		ch, err := ls.cfg.Channels.ChannelByName(ctx, name)
		found := err == nil
		if err != nil && !errors.Is(err, hub.ErrNotFound) {
			ls.cfg.Refusals.Refuse(w, hub.ReasonUnavailable, "the hub's state store did not answer; retry")
			return false
		}
		d, ref := hub.Enter(ctx, ls.cfg.Readers, r, ch, found, ls.cfg.Token) // the hub's door step
		switch {
		case ref == nil && d.Authorized:
			req.grant, req.expires = d.Grant, d.Grant.Expires
		case ref != nil && !ref.NotFound():
			ref.Write(w)
			return false
		}
	}
	return true
}

// hides reports whether the session may not receive rec: a private
// channel's record its token does not cover. The channel's privacy now
// decides; when the channel does not exist any more, or the hub cannot
// look it up right now (its store is down: live sessions go on from the
// log), the record's own mark decides (wire.Record.Private: the channel
// was private when the record was stored).
func (s *session) hides(rec *wire.Record) bool {
	if s.ls.cfg.Channels == nil {
		return false
	}
	private, topic := rec.Private, rec.Topic
	if ch, err := s.ls.cfg.Channels.ChannelByName(s.ctx, rec.Channel); err == nil {
		private, topic = ch.Private, ch.Topic
	}
	if !private || s.req.grant.Allows(access.Subscribe, topic) {
		return false
	}
	raw, ok := wire.MercureTopicOf(s.ls.cfg.Origin, topic) // a grant names a Mercure topic that is no URL as it is
	return !ok || !s.req.grant.Allows(access.Subscribe, raw)
}

// expireWithToken closes the session when the token that admitted it to a
// private channel expires; it returns the timer's stop, or nil.
func (s *session) expireWithToken() func() bool {
	if s.req.expires.IsZero() {
		return nil
	}
	t := time.AfterFunc(time.Until(s.req.expires), func() {
		s.close(wire.CloseTokenExpired, "token expired; resume with since=%d and a new token")
	})
	return t.Stop
}
