package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// fetchMemo remembers the validators of a topic's last fetched content.
type fetchMemo struct {
	etag, lastModified string
}

// handlePublishPing takes hub.mode=publish with hub.url or hub.topic
// (repeatable): the hub fetches each topic and distributes what is new.
func (h *Hub) handlePublishPing(w http.ResponseWriter, r *http.Request, form url.Values) {
	given := append(append([]string(nil), form["hub.url"]...), form["hub.topic"]...)
	if len(given) == 0 {
		h.writeRefusal(w, refuse(ReasonNoTopic, "hub.mode=publish needs hub.url or hub.topic"))
		return
	}
	topics := make([]string, 0, len(given))
	for _, raw := range given {
		topic, err := topicOf("the topic", raw)
		if err == nil {
			err = h.notMercureTopic(topic)
		}
		if err != nil {
			h.writeRefusal(w, err)
			return
		}
		topics = append(topics, topic)
	}
	topics = dedupe(topics)
	ctx, span := h.startIntake(r, "thin")
	var failed error
	defer func() { endSpan(span, failed) }()
	var out strings.Builder
	for _, topic := range topics {
		res, err := h.thinPing(ctx, r, topic)
		if err != nil {
			failed = err
			var pe *PublishError
			if errors.As(err, &pe) {
				pe.Msg = wire.Clip(topic) + ": " + pe.Msg
			}
			h.writeRefusal(w, err)
			return
		}
		switch {
		case res.Unchanged:
			fmt.Fprintf(&out, "%s: unchanged\n", wire.Clip(topic))
		case res.Duplicate:
			fmt.Fprintf(&out, "%s: duplicate of seq %d\n", wire.Clip(topic), res.Seq)
		default:
			fmt.Fprintf(&out, "%s: stored up to seq %d\n", wire.Clip(topic), res.Seq)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(out.String()))
}

// notMercureTopic refuses a thin ping to the hub's URL for a Mercure topic
// that is no URL (wire.MercureTopicURL): the hub would fetch its own URL,
// which serves no document; such a channel takes its updates through the
// Mercure face.
func (h *Hub) notMercureTopic(topic string) error {
	raw, ok := wire.MercureTopicOf(h.mercureOrigin, topic)
	if !ok {
		return nil
	}
	return refuse(ReasonTopic, "%s is the hub's URL for the Mercure topic %s, which has no document to fetch: publish it through Mercure (POST %s with topic and data)",
		wire.Clip(topic), wire.Clip(strconv.Quote(raw)), h.mercureOrigin+wire.PathMercure)
}

// thinPing takes a thin ping to topic (normalised): the door step, then
// the channel's publisher trust, then the fetch. With OpenTopics a topic
// the hub does not serve gets a channel, and a private channel the caller
// has no grant for is answered as such a topic would be (phantomPing).
func (h *Hub) thinPing(ctx context.Context, r *http.Request, topic string) (PublishResult, error) {
	d, err := h.enter(ctx, r, access.Publish, topic)
	if err != nil {
		return PublishResult{}, err
	}
	ch := d.Channel
	switch {
	case d.Hidden && h.cfg.OpenTopics:
		return h.phantomPing(ctx, topic)
	case !d.Found && h.cfg.OpenTopics:
		if ch, err = h.channelFor(ctx, topic); err != nil {
			return PublishResult{}, unavailable("the state store", fmt.Errorf("channel lookup: %w", err))
		}
		if ch.Private { // made private since the door: the caller had no grant
			return h.phantomPing(ctx, topic)
		}
		d = Door{Channel: ch, Found: true}
	case !d.Found:
		return PublishResult{}, unknownChannel(topic)
	}
	if ch.Follow != "" {
		return PublishResult{}, refuse(ReasonFollowed, "the hub follows this channel's Source (%s) itself: it takes no pings", wire.Clip(ch.Follow))
	}
	if ch.Trust == TrustToken {
		if err := h.checkPublisher(ctx, r, d); err != nil {
			return PublishResult{}, err
		}
	}
	// one fetch at a time per topic, so two pings never compute the same diff
	unlock, err := h.lockChannel(ctx, fetchKey(ch.Topic))
	if err != nil {
		return PublishResult{}, err
	}
	defer unlock()
	return h.fetchTopic(ctx, ch)
}

// phantomPing answers a thin ping to a private channel from a caller
// without a grant on an --open-topics hub as a ping to a topic the hub
// does not serve yet is answered, without creating a channel (which would
// shadow the private one) and without storing anything: the hub fetches
// the topic as it would a new channel's, answers a fetch that fails as
// such, and one that succeeds with the next sequence of the log, as a new
// channel's first notification would be stored at. A thin ping carries
// nothing of the caller's but the topic, so nothing is lost; the
// channel's publishers ping with their token. What it does not do is
// judge the content fetched: a topic serving what a new channel's first
// ping would be refused for (502 invalid_topic) is answered 200 here;
// judging it would take the channel's state, which is the private one's.
func (h *Hub) phantomPing(ctx context.Context, topic string) (PublishResult, error) {
	if err := h.phantomRoom(ctx); err != nil {
		return PublishResult{}, unavailable("the state store", fmt.Errorf("channel lookup: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := h.fetch(ctx, topic, fetchMemo{}); err != nil {
		return PublishResult{}, err
	}
	_, last, err := h.cfg.Log.Bounds(ctx)
	if err != nil {
		return PublishResult{}, unavailable("the log", err)
	}
	return PublishResult{Seq: last + 1}, nil
}

// fetchTopic fetches a channel's topic URI (conditionally, with the ETag and
// Last-Modified seen before) and publishes what is new: a Change List's new
// entries as change notifications, a change-notification payload as it is,
// any other content verbatim with its own Content-Type.
func (h *Hub) fetchTopic(ctx context.Context, ch Channel) (PublishResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h.mu.Lock()
	memo := h.fetched[ch.Topic]
	h.mu.Unlock()
	got, err := h.fetch(ctx, ch.Topic, memo)
	if err != nil || got.notModified {
		return PublishResult{Unchanged: got.notModified}, err
	}
	res, err := h.publishFetched(ctx, ch, got.body, got.contentType)
	if err != nil {
		return res, err
	}
	h.mu.Lock()
	h.fetched[ch.Topic] = got.memo
	h.mu.Unlock()
	return res, nil
}

// fetched is a topic's content as a thin ping fetched it.
type fetched struct {
	notModified bool // the content is the one memo was taken of
	body        []byte
	contentType string // the answer's, else sniffed
	memo        fetchMemo
}

// fetch GETs topic, conditionally on memo, and reads its content, or
// answers the refusal of a fetch that failed (reason fetch, or too_large).
func (h *Hub) fetch(ctx context.Context, topic string, memo fetchMemo) (fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, topic, nil)
	if err != nil {
		return fetched{}, refuse(ReasonTopic, "%v", err)
	}
	if memo.etag != "" {
		req.Header.Set("If-None-Match", memo.etag)
	}
	if memo.lastModified != "" {
		req.Header.Set("If-Modified-Since", memo.lastModified)
	}
	_, span := h.cfg.Tracer.Start(ctx, spanFetch, trace.WithSpanKind(trace.SpanKindClient))
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		endSpan(span, err)
		return fetched{}, refuse(ReasonFetch, "fetching the topic failed: %v", wire.Clip(err.Error()))
	}
	defer span.End() // once the body is read
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return fetched{notModified: true}, nil
	}
	if resp.StatusCode/100 != 2 {
		return fetched{}, refuse(ReasonFetch, "fetching the topic answered %d", resp.StatusCode)
	}
	body, err := readLimited(resp.Body, h.cfg.MaxBody)
	if err != nil {
		return fetched{}, err
	}
	contentType := resp.Header.Get("Content-Type")
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	return fetched{body: body, contentType: contentType,
		memo: fetchMemo{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}}, nil
}

// publishFetched decides what a fetched topic body means and publishes it.
// Whatever claims to be a Sitemap or ResourceSync document (changefeed.Sniff)
// is handled as one, whatever its Content-Type, and refused with 502 naming
// the rule when it is invalid; generic XML (application/xml, text/xml) with a
// DOCTYPE is refused too. Anything else is distributed verbatim with its own
// Content-Type, skipping content already sent.
func (h *Hub) publishFetched(ctx context.Context, ch Channel, body []byte, contentType string) (PublishResult, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "text/html" && (isXML(contentType) || looksLikeMarkup(body)) {
		sn := changefeed.Sniff(body)
		if sn.DTD && (mt == "application/xml" || mt == "text/xml" || sn.ResourceSync) {
			return PublishResult{}, refuse(ReasonInvalidTopic,
				"the topic serves XML with a DOCTYPE (rule %s): the hub never passes on a DTD as %s", changefeed.RuleDTD, wire.Clip(contentType))
		}
		if sn.ResourceSync {
			return h.publishResourceSync(ctx, ch, body, contentType)
		}
	}
	return h.commit(ctx, incoming{ch: ch, body: body, contentType: contentType})
}

// publishResourceSync publishes a fetched document that claims to be a
// Sitemap or ResourceSync document, once it is valid: a Change List's new
// entries become change notifications, a change notification is stored as
// a fat ping would be, any other ResourceSync document is passed on as it
// is if it is valid in Strict mode.
func (h *Hub) publishResourceSync(ctx context.Context, ch Channel, body []byte, contentType string) (PublishResult, error) {
	if err := checkCharset(contentType); err != nil {
		return PublishResult{}, refuse(ReasonInvalidTopic, "the topic serves a ResourceSync document as %q: ResourceSync documents are UTF-8", wire.Clip(contentType))
	}
	if !isXML(contentType) {
		contentType = "application/xml"
	}
	doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient, MaxBytes: h.cfg.MaxBody})
	if err != nil {
		return PublishResult{}, refuse(ReasonInvalidTopic, "the topic serves an invalid ResourceSync document: %v", err)
	}
	switch capa := doc.MD.Capability; {
	case doc.Kind == changefeed.URLSet && capa == changefeed.CapChangeList:
		return h.publishChangeList(ctx, ch, doc)
	case capa == changefeed.CapChangeNotification || capa == changefeed.CapChangeListNotification:
		in, err := h.notification(ch, body, contentType, "")
		var pe *PublishError
		if errors.As(err, &pe) && pe.Status == 400 {
			// the Source's document is at fault, not the ping
			return PublishResult{}, refuse(ReasonInvalidTopic, "the topic serves an invalid change notification: %s", pe.Msg)
		}
		if err != nil {
			return PublishResult{}, err
		}
		return h.commit(ctx, in)
	}
	if _, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Strict, MaxBytes: h.cfg.MaxBody}); err != nil {
		return PublishResult{}, refuse(ReasonInvalidTopic, "the topic serves an invalid ResourceSync document: %v", err)
	}
	return h.commit(ctx, incoming{ch: ch, body: body, contentType: contentType})
}

// looksLikeMarkup reports whether body starts, after an optional UTF-8 byte
// order mark and white space, with "<".
func looksLikeMarkup(body []byte) bool {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '<'
}

// publishChangeList publishes the entries of a Source's Change List that
// the channel does not hold, as change notifications whose from is the
// previous until: those after the channel's last until, and those at it
// whose identity (loc, change, datetime, hash, length) the channel's last
// notifications do not hold (changefeed.Fresh). Entries are split into
// notifications of at most changefeed.DefaultMaxEntries.
func (h *Hub) publishChangeList(ctx context.Context, ch Channel, doc *changefeed.Document) (PublishResult, error) {
	if err := h.checkNotFuture(doc, ReasonInvalidTopic); err != nil {
		return PublishResult{}, err
	}
	// what the channel holds at its anchor, by identity: a change the
	// Source lists at the anchor's very instant after the last ping is new
	// (by datetime alone it counted as published and was lost)
	st, atAnchor, known, err := h.FollowAnchor(ctx, ch)
	if err != nil {
		return PublishResult{}, err
	}
	from := st.LastUntil
	if from.IsZero() {
		from = doc.MD.From.Time
	}
	var seen changefeed.Seen
	if !st.LastUntil.IsZero() {
		seen = changefeed.SeenAt(st.LastUntil, atAnchor, known)
	}
	var fresh []changefeed.Entry
	for _, e := range changefeed.Fresh(doc.Entries, seen) {
		if !changefeed.EntryTime(e).Before(from) {
			fresh = append(fresh, e)
		}
	}
	if len(fresh) == 0 {
		return PublishResult{Unchanged: true, Seq: st.LastSeq}, nil
	}
	return h.publishEntries(ctx, ch, from, doc.MD.Until.Time, upOf(ch, doc), fresh)
}

// publishEntries publishes fresh (in order) as change notifications of at
// most changefeed.DefaultMaxEntries entries, the first from from, each
// next one from the previous until; the last one's until is until when that
// is after its last entry's time.
func (h *Hub) publishEntries(ctx context.Context, ch Channel, from, until time.Time, up string, fresh []changefeed.Entry) (PublishResult, error) {
	var res PublishResult
	for start := 0; start < len(fresh); start += changefeed.DefaultMaxEntries {
		chunk := fresh[start:min(start+changefeed.DefaultMaxEntries, len(fresh))]
		end := changefeed.EntryTime(chunk[len(chunk)-1])
		if start+len(chunk) == len(fresh) && until.After(end) {
			end = until
		}
		body, err := encodeNotification(from, end, up, chunk)
		var ve *changefeed.ValidationError
		if errors.As(err, &ve) {
			// what the hub relays is valid in Strict mode; the Source's
			// Change List is what made this notification invalid
			return res, refuse(ReasonInvalidTopic, "the topic's Change List makes an invalid change notification: %v", err)
		}
		if err != nil {
			return res, fmt.Errorf("encode notification: %w", err)
		}
		in := incoming{ch: ch, body: body, contentType: "application/xml", from: from, until: end, resourcesync: up, rs: true, entries: len(chunk)}
		if res, err = h.commit(ctx, in); err != nil {
			return res, err
		}
		from = end
	}
	return res, nil
}

// encodeNotification renders a change-notification payload.
func encodeNotification(from, until time.Time, up string, entries []changefeed.Entry) ([]byte, error) {
	var buf bytes.Buffer
	doc := &changefeed.Document{
		Header: changefeed.Header{
			Kind: changefeed.URLSet,
			MD: changefeed.MD{
				Capability: changefeed.CapChangeNotification,
				From:       dateTime(from),
				Until:      dateTime(until),
				Length:     -1,
			},
		},
		Entries: entries,
	}
	if up != "" {
		doc.Links = []changefeed.Link{{Rel: "up", Href: up, Length: -1, Pri: -1}}
	}
	if err := changefeed.Validate(doc, changefeed.Options{Mode: changefeed.Strict}); err != nil {
		return nil, err
	}
	if err := changefeed.Encode(&buf, doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func dateTime(t time.Time) changefeed.DateTime {
	return changefeed.DateTime{Time: t.UTC(), Raw: t.UTC().Format(time.RFC3339Nano)}
}

func isXML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
