package hub

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// topicCheckTTL is how long a verified topic's Link headers are trusted.
const topicCheckTTL = 10 * time.Minute

// handleFatPing takes a ResourceSync notification POSTed as application/xml
// with Link rel="self" (topic) and rel="hub" (this hub), and answers 200 only
// once the log holds it.
func (h *Hub) handleFatPing(w http.ResponseWriter, r *http.Request, contentType string) {
	ctx, span := h.startIntake(r, "fat")
	res, err := h.fatPing(ctx, r, contentType)
	endSpan(span, err)
	if err != nil {
		h.writeRefusal(w, err)
		return
	}
	writePublishResult(w, res)
}

func (h *Hub) fatPing(ctx context.Context, r *http.Request, contentType string) (PublishResult, error) {
	if err := checkCharset(contentType); err != nil {
		return PublishResult{}, err
	}
	links := wire.ParseLinks(r.Header.Values(wire.HeaderLink))
	selfs := wire.LinksRel(links, wire.RelSelf)
	if len(selfs) != 1 {
		return PublishResult{}, refuse(ReasonLinks, "exactly one Link header with rel=\"self\" naming the topic is required, found %d", len(selfs))
	}
	topic, err := normalTopic("Link rel=\"self\"", selfs[0])
	if err != nil {
		return PublishResult{}, err
	}
	hubs := wire.LinksRel(links, wire.RelHub)
	if len(hubs) == 0 {
		return PublishResult{}, refuse(ReasonLinks, "a Link header with rel=\"hub\" naming this hub (%s) is required", h.cfg.HubURL)
	}
	if !containsURL(hubs, h.cfg.HubURL) {
		return PublishResult{}, refuse(ReasonLinks, "Link rel=\"hub\" names %s, but this hub is %s", wire.Clip(strings.Join(hubs, ", ")), h.cfg.HubURL)
	}
	d, err := h.enter(ctx, r, access.Publish, topic)
	if err != nil {
		return PublishResult{}, err
	}
	if !d.Found { // a private channel without a grant too: a fat ping never creates one
		return PublishResult{}, unknownChannel(topic)
	}
	ch := d.Channel
	if err := h.checkPublisher(ctx, r, d); err != nil {
		return PublishResult{}, err
	}
	body, err := readLimited(r.Body, h.cfg.MaxBody)
	if err != nil {
		return PublishResult{}, err
	}
	rs := ""
	if v := wire.LinksRel(links, wire.RelResourceSync); len(v) > 0 {
		rs = v[0]
	}
	notification := h.notification
	if d.framework {
		notification = h.frameworkNotification
	}
	_, span := h.cfg.Tracer.Start(ctx, spanValidate)
	in, err := notification(ch, body, contentType, rs)
	endSpan(span, err)
	if err != nil {
		return PublishResult{}, err
	}
	return h.commit(ctx, in)
}

// notification validates a ResourceSync change-notification payload.
func (h *Hub) notification(ch Channel, body []byte, contentType, resourcesync string) (incoming, error) {
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Strict, MaxBytes: h.cfg.MaxBody})
	if err != nil {
		return incoming{}, refuse(ReasonInvalid, "invalid notification: %v", err)
	}
	capa := doc.MD.Capability
	if doc.Kind != changefeed.URLSet || (capa != changefeed.CapChangeNotification && capa != changefeed.CapChangeListNotification) {
		return incoming{}, refuse(ReasonCapability,
			"wrong capability %q: the hub takes <urlset> payloads with rs:md capability=\"change-notification\"", wire.Clip(string(capa)))
	}
	if doc.MD.From.IsZero() || doc.MD.Until.IsZero() {
		return incoming{}, refuse(ReasonInvalid, "invalid notification: root rs:md needs both from and until")
	}
	return h.incomingOf(ch, doc, body, contentType, resourcesync, true)
}

// incomingOf refuses a validated notification dated in the future and
// otherwise makes it the incoming record of ch; continuity says whether the
// channel's from/until continuity applies to it (change notifications).
func (h *Hub) incomingOf(ch Channel, doc *changefeed.Document, body []byte, contentType, resourcesync string, continuity bool) (incoming, error) {
	if err := h.checkNotFuture(doc, ReasonFuture); err != nil {
		return incoming{}, err
	}
	resourcesync = cmp.Or(resourcesync, ch.CapabilityList)
	return incoming{
		ch:           ch,
		body:         body,
		contentType:  contentType,
		from:         doc.MD.From.Time,
		until:        doc.MD.Until.Time,
		resourcesync: resourcesync,
		rs:           continuity,
		entries:      len(doc.Entries),
	}, nil
}

// checkPublisher applies the publisher trust of the channel d found; a
// private channel's publisher was admitted by the door step (enter).
func (h *Hub) checkPublisher(ctx context.Context, r *http.Request, d Door) error {
	ch := d.Channel
	if ch.Private && d.Authorized {
		return nil
	}
	switch ch.Trust {
	case TrustOpen:
		return nil
	case TrustToken:
		auth := r.Header.Get("Authorization")
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || tok == "" {
			return refuse(ReasonUnauthorized, "this channel needs Authorization: Bearer <token>")
		}
		if subtle.ConstantTimeCompare([]byte(tok), []byte(ch.Token)) != 1 {
			return refuse(ReasonForbidden, "wrong publisher token for this channel")
		}
		return nil
	case TrustVerifiedTopic:
		topic, err := h.publisherTopic(ctx, ch)
		if err != nil {
			return err
		}
		return h.verifyTopic(ctx, topic)
	}
	return refuse(ReasonForbidden, "channel has no publisher trust configured")
}

// verifyTopic checks that HEAD on the topic URI answers with Link headers
// naming the topic as self and this hub as hub (RS Change Notification §4.1).
func (h *Hub) verifyTopic(ctx context.Context, topic string) error {
	now := h.cfg.Now()
	h.mu.Lock()
	until, ok := h.topicOK[topic]
	h.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, topic, nil)
	if err != nil {
		return refuse(ReasonUnverifiedTopic, "topic URI: %v", wire.Clip(err.Error()))
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return refuse(ReasonUnverifiedTopic, "could not verify the topic URI: %v", wire.Clip(err.Error()))
	}
	resp.Body.Close()
	links := wire.ParseLinks(resp.Header.Values(wire.HeaderLink))
	if resp.StatusCode/100 != 2 || !containsURL(wire.LinksRel(links, wire.RelHub), h.cfg.HubURL) || !containsURL(wire.LinksRel(links, wire.RelSelf), topic) {
		return refuse(ReasonUnverifiedTopic,
			"the topic URI %s must answer HEAD with 200 and Link headers rel=\"self\" (itself) and rel=\"hub\" (%s); it answered %d with %q",
			wire.Clip(topic), h.cfg.HubURL, resp.StatusCode, wire.Clip(strings.Join(resp.Header.Values("Link"), ", ")))
	}
	h.mu.Lock()
	h.topicOK[topic] = now.Add(topicCheckTTL)
	h.mu.Unlock()
	return nil
}

// readLimited reads a whole body, refusing one over limit with 413.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, refuse(ReasonRead, "reading body: %v", err)
	}
	if int64(len(body)) > limit {
		return nil, refuse(ReasonTooLarge, "body exceeds the limit of %d bytes", limit)
	}
	return body, nil
}

// checkCharset refuses a notification labelled with a charset other than
// UTF-8 (case-insensitive; absent is fine): ResourceSync documents are
// UTF-8, and the label is passed on with the body.
func checkCharset(contentType string) error {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return refuse(ReasonContentType, "Content-Type %q: %v", wire.Clip(contentType), err)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return refuse(ReasonCharset, "Content-Type charset %q: the hub takes UTF-8 notifications only (charset=utf-8 or none)", wire.Clip(cs))
	}
	return nil
}

func writePublishResult(w http.ResponseWriter, res PublishResult) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set(wire.HeaderSeq, fmt.Sprint(res.Seq))
	w.WriteHeader(http.StatusOK)
	switch {
	case res.Unchanged:
		_, _ = io.WriteString(w, "unchanged\n")
	case res.Duplicate:
		fmt.Fprintf(w, "duplicate of seq %d\n", res.Seq)
	case res.Gap != nil:
		fmt.Fprintf(w, "stored seq %d; gap recorded from %s to %s\n", res.Seq, fmtTime(res.Gap.From), fmtTime(res.Gap.Until))
	default:
		fmt.Fprintf(w, "stored seq %d\n", res.Seq)
	}
}
