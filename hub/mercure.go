package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// MaxMercureID bounds the id a Mercure publisher gives its update.
const MaxMercureID = 256

// The form fields of a Mercure publish.
const (
	mercureTopic   = "topic"
	mercureData    = "data"
	mercureID      = "id"
	mercureType    = "type"
	mercureRetry   = "retry"
	mercurePrivate = "private"
)

// MercurePublish returns the handler of Mercure publishes: a POST of a
// form (topic, data, id, private; type and retry are refused, as the log
// keeps neither) to a channel's topic, which is intake like any other (with
// --open-topics, a topic no channel has makes an open channel, as a
// WebSub ping's does). A topic that is no http(s) URL names the channel
// whose topic is the hub's URL for it (wire.MercureTopicURL). Data that
// claims to be a ResourceSync document must be a valid change
// notification: a fat ping of the channel, validated, checked for
// continuity and stored as the hub URL's fat pings are. Other non-empty
// UTF-8 text is stored verbatim as text/plain on a channel that carries no
// ResourceSync documents (carriesResourceSync; webhooks deliver it as it
// is, live sessions carry it, pull mode leaves it out) and refused on one
// that does. The publisher shows a token (access.TokenFrom) that the
// publishers' verifier takes by rules (access.VerifyAccess) and that
// grants publish on the topic (401, 403); it takes the place of the
// channel's publisher trust. private is allowed on a private channel only
// (a public channel's updates reach every subscriber; the channel decides,
// never the publish). A publisher's id (one that does not read as this
// log's cursor) is the update's id on the Mercure face and its idempotency
// key (wire.MercureKey): published again to the topic it is answered as
// the first and stored once. The answer is 200 text/plain with the
// update's id: the publisher's, else its cursor in the log.
func (h *Hub) MercurePublish(rules access.AccessRules) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "GET, POST, OPTIONS")
			plainError(w, http.StatusMethodNotAllowed, "method not allowed: publish with POST, subscribe with GET")
			return
		}
		ctx, span := h.startIntake(r, "mercure")
		res, id, err := h.mercurePublish(ctx, r, rules)
		endSpan(span, err)
		if err != nil {
			h.writeRefusal(w, err)
			return
		}
		if id == "" {
			id = wire.Cursor{Epoch: h.logEpoch(), Seq: res.Seq}.String()
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set(wire.HeaderSeq, strconv.FormatUint(res.Seq, 10))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, id)
	})
}

// mercurePublish reads, authorizes, validates and commits one publish; it
// returns the publisher's id too ("" without one).
func (h *Hub) mercurePublish(ctx context.Context, r *http.Request, rules access.AccessRules) (PublishResult, string, error) {
	form, err := h.mercureForm(r)
	if err != nil {
		return PublishResult{}, "", err
	}
	topics := form[mercureTopic]
	if len(topics) != 1 || topics[0] == "" {
		return PublishResult{}, "", refuse(ReasonNoTopic, "a Mercure publish names exactly one topic, a channel's topic (found %d)", len(topics))
	}
	topic := topics[0]
	chTopic, err := h.mercureChannelTopic(topic)
	if err != nil {
		return PublishResult{}, "", err
	}
	for _, f := range []string{mercureType, mercureRetry} {
		if form.Get(f) != "" {
			return PublishResult{}, "", refuse(ReasonInvalid, "%s: this hub keeps no event type or retry with an update (its subscribers read the change notification itself); publish without %s", f, f)
		}
	}
	id := form.Get(mercureID)
	if err := wire.CheckMercureString(id, MaxMercureID); err != nil {
		return PublishResult{}, "", refuse(ReasonInvalid, "id: %v", err)
	}
	if c, err := wire.ParseCursor(id); id != "" && (id == "earliest" || err == nil && (c.Epoch == "" || c.Epoch == h.logEpoch())) {
		return PublishResult{}, "", refuse(ReasonInvalid, "id: %s reads as one of the hub's own ids (a cursor of its log, or earliest); choose another", wire.Clip(strconv.Quote(id)))
	}
	tok := access.TokenFrom(r, "")
	if tok == "" {
		return PublishResult{}, "", refuse(ReasonUnauthorized, "a Mercure publish needs a token (Authorization: Bearer, or the mercureAuthorization cookie) granting publish on the topic")
	}
	g, err := h.cfg.Publishers.VerifyAccess(ctx, tok, rules)
	if err != nil {
		return PublishResult{}, "", tokenRefusal(&access.Refusal{Status: http.StatusUnauthorized, Reason: err.Error()})
	}
	if raw, _ := wire.MercureTopicOf(h.mercureOrigin, chTopic); !g.Allows(access.Publish, topic) && !g.Allows(access.Publish, raw) { // either spelling of a topic that is no URL
		return PublishResult{}, "", tokenRefusal(&access.Refusal{Status: http.StatusForbidden, Reason: "the token grants no publish on this topic"})
	}
	ch, err := h.lookupChannel(ctx, chTopic)
	if errors.Is(err, ErrNotFound) && form.Get(mercurePrivate) == "" {
		ch, err = h.channelFor(ctx, chTopic) // --open-topics: a new open channel
	}
	if errors.Is(err, ErrNotFound) {
		return PublishResult{}, "", refuse(ReasonUnknownChannel, "no channel has the topic %s: a Mercure topic is a channel's topic", wire.Clip(strconv.Quote(topic)))
	}
	if err != nil {
		var pe *PublishError
		if errors.As(err, &pe) {
			return PublishResult{}, "", err
		}
		return PublishResult{}, "", unavailable("the state store", fmt.Errorf("channel lookup: %w", err))
	}
	if form.Get(mercurePrivate) != "" && !ch.Private {
		return PublishResult{}, "", refuse(ReasonInvalid, "private: this channel is public, its updates reach every subscriber; make the channel private (admin API) to keep them to covering grants")
	}
	in, err := h.mercureUpdate(ctx, ch, []byte(form.Get(mercureData)))
	if err != nil {
		return PublishResult{}, "", err
	}
	if id != "" {
		in.key = wire.MercureKey(topic, id)
	}
	res, err := h.commit(ctx, in)
	return res, id, err
}

// logEpoch is the identity of the hub's log ("" for a log without one).
func (h *Hub) logEpoch() string {
	if e, ok := h.cfg.Log.(interface{ Epoch() string }); ok {
		return e.Epoch()
	}
	return ""
}

// mercureUpdate makes the incoming record of a publish's data: a fat ping
// when the data claims to be a ResourceSync document (then it must be a
// valid change notification, or a framework notification on a framework
// channel), any other text stored verbatim as text/plain, as a thin ping
// stores a topic that is no ResourceSync document.
func (h *Hub) mercureUpdate(ctx context.Context, ch Channel, data []byte) (incoming, error) {
	fw, err := h.isFrameworkChannel(ctx, ch)
	if err != nil {
		return incoming{}, unavailable("the state store", err)
	}
	switch {
	case fw:
		return h.frameworkNotification(ch, data, "application/xml", "")
	case changefeed.Sniff(data).ResourceSync:
		in, err := h.notification(ch, data, "application/xml", "")
		var pe *PublishError
		if errors.As(err, &pe) {
			pe.Msg = "data is a ResourceSync document but not a valid change notification: " + pe.Msg
		}
		return in, err
	case len(data) == 0:
		return incoming{}, refuse(ReasonInvalid, "data is empty: an update carries a change notification or text")
	case !utf8.Valid(data):
		return incoming{}, refuse(ReasonInvalid, "data is not UTF-8")
	}
	if why, err := h.carriesResourceSync(ctx, ch); err != nil {
		return incoming{}, err
	} else if why != "" {
		return incoming{}, textRefused(why)
	}
	return incoming{ch: ch, body: data, contentType: mercureText, text: true}, nil
}

// historyHoldsChangeNotifications is why a channel whose history holds a
// change notification carries ResourceSync documents.
const historyHoldsChangeNotifications = "its history holds change notifications"

// textRefused refuses a Mercure update that is no ResourceSync document
// on a channel that carries them, saying why (carriesResourceSync). The
// publish checks before its commit, and the commit again under the
// channel's lock, where its history is serialised (incoming.text).
func textRefused(why string) error {
	return refuse(ReasonInvalid, "data is no ResourceSync document, and this channel carries ResourceSync documents (%s): publish a change notification (a sitemap <urlset> whose rs:md has capability=\"change-notification\"), or publish text to a topic of its own", why)
}

// carriesResourceSync returns why ch carries ResourceSync documents, ""
// when it does not: it names a Source's Capability List or is hosted (a
// Change List), follows a Source, or its history holds a change
// notification. Such a channel's subscribers on every face read change
// notifications; text stays on channels that never carried one.
func (h *Hub) carriesResourceSync(ctx context.Context, ch Channel) (string, error) {
	switch {
	case ch.Follow != "":
		return "it follows the Source " + wire.Clip(ch.Follow), nil
	case ch.Hosted:
		return "the hub hosts its Change List", nil
	case ch.CapabilityList != "":
		return "its Source's Capability List is " + wire.Clip(ch.CapabilityList), nil
	}
	st, err := h.ChannelState(ctx, ch.Topic)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", unavailable("the state store", fmt.Errorf("channel state: %w", err))
	}
	if !st.LastUntil.IsZero() {
		return historyHoldsChangeNotifications, nil
	}
	return "", nil
}

// mercureText is the content type of a Mercure update's data that is no
// ResourceSync document.
const mercureText = "text/plain; charset=utf-8"

// mercureForm reads a publish's form, bounded by MaxBody.
func (h *Hub) mercureForm(r *http.Request) (url.Values, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, refuse(ReasonContentType, "a Mercure publish is a form (application/x-www-form-urlencoded)")
	}
	body, err := readLimited(r.Body, h.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, refuse(ReasonRead, "the form does not parse: %v", wire.Clip(err.Error()))
	}
	return form, nil
}

// mercureChannelTopic returns the topic of the channel a Mercure topic
// names: an http(s) URL is a channel's topic itself; any other string
// (bounded by wire.MaxMercureTopic, UTF-8, no control or format
// characters) names the channel whose topic is the hub's URL for it
// (wire.MercureTopicURL).
func (h *Hub) mercureChannelTopic(topic string) (string, error) {
	if wire.IsURLTopic(topic) {
		return topic, nil
	}
	if err := wire.CheckMercureString(topic, wire.MaxMercureTopic); err != nil {
		return "", refuse(ReasonTopic, "topic %s: %v", wire.Clip(strconv.Quote(topic)), err)
	}
	return wire.MercureTopicURL(h.mercureOrigin, topic), nil
}

// Origin returns the hub URL's scheme and authority, normalised
// (wire.NormalizeURL): where the hub's own URLs start.
func (h *Hub) Origin() string { return h.origin() }

// MercureOrigin returns where the URLs of Mercure topics that are no URL
// start (Config.MercureOrigin), normalised as Origin.
func (h *Hub) MercureOrigin() string { return h.mercureOrigin }
