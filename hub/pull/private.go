package pull

import (
	"net/http"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/hub"
)

// Private channels (hub.Channel.Private): their documents are served only
// to a reader whose token's mercure.subscribe claim covers the channel's
// topic (Config.Readers); to anyone else they answer 404 as a channel that
// does not exist (401 for a token that does not verify, 403 for one
// without the claim), and the Source Description and robots.txt leave
// them out. What is served of them is marked for private caches only, and
// the framework channels never announce them.

// privateCache is the Cache-Control of a private channel's documents and
// of a listing that names one: a shared cache must not keep them.
const privateCache = "private, max-age=5"

// admit applies the channel check of every per-channel document, the
// hub's door step (hub.Enter); it answers the request itself and returns
// false when the caller may not read ch (found says ch exists).
func (p *Pull) admit(w http.ResponseWriter, r *http.Request, ch hub.Channel, found bool) bool {
	d, ref := hub.Enter(r.Context(), p.cfg.Readers, r, ch, found, "")
	switch {
	case ref != nil:
		ref.Write(w)
	case !d.Found:
		p.refuse(w, hub.ReasonUnknownChannel, "no such channel")
	default:
		if d.Authorized {
			markPrivate(w.Header())
		}
		return true
	}
	return false
}

// visible returns the channels of chans the caller of r may read, and
// marks the answer private when it names a private channel.
func (p *Pull) visible(w http.ResponseWriter, r *http.Request, chans []hub.Channel) []hub.Channel {
	var g *access.Grant
	out := make([]hub.Channel, 0, len(chans))
	for _, ch := range chans {
		if ch.Private {
			if g == nil {
				grant := p.cfg.Readers.GrantFrom(r.Context(), r)
				g = &grant
			}
			if !g.Allows(access.Subscribe, ch.Topic) {
				continue
			}
			markPrivate(w.Header())
		}
		out = append(out, ch)
	}
	return out
}

// publicOnly returns the public channels of chans.
func publicOnly(chans []hub.Channel) []hub.Channel {
	out := make([]hub.Channel, 0, len(chans))
	for _, ch := range chans {
		if !ch.Private {
			out = append(out, ch)
		}
	}
	return out
}

// markPrivate keeps a document out of shared caches.
func markPrivate(h http.Header) {
	h.Set("Cache-Control", privateCache)
}
