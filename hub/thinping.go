package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
)

// fetchMemo remembers the validators of a topic's last fetched content.
type fetchMemo struct {
	etag, lastModified string
}

// handlePublishPing takes hub.mode=publish with hub.url or hub.topic
// (repeatable): the hub fetches each topic and distributes what is new.
func (h *Hub) handlePublishPing(w http.ResponseWriter, r *http.Request, form url.Values) {
	topics := dedupe(append(append([]string(nil), form["hub.url"]...), form["hub.topic"]...))
	if len(topics) == 0 {
		h.obs.Rejected("no_topic")
		plainError(w, http.StatusBadRequest, "hub.mode=publish needs hub.url or hub.topic")
		return
	}
	var out strings.Builder
	for _, topic := range topics {
		res, err := h.thinPing(r.Context(), r, topic)
		if err != nil {
			var pe *PublishError
			if errors.As(err, &pe) {
				pe.Msg = topic + ": " + pe.Msg
			}
			h.writePublishError(w, err)
			return
		}
		switch {
		case res.Unchanged:
			fmt.Fprintf(&out, "%s: unchanged\n", topic)
		case res.Duplicate:
			fmt.Fprintf(&out, "%s: duplicate of seq %d\n", topic, res.Seq)
		default:
			fmt.Fprintf(&out, "%s: stored up to seq %d\n", topic, res.Seq)
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(out.String()))
}

func (h *Hub) thinPing(ctx context.Context, r *http.Request, topic string) (PublishResult, error) {
	if err := checkHTTPURL(topic); err != nil {
		return PublishResult{}, refuse(400, "invalid_topic", "%v", err)
	}
	ch, err := h.channelFor(ctx, topic)
	if errors.Is(err, ErrNotFound) {
		return PublishResult{}, refuse(404, "unknown_channel", "no channel for this topic on this hub")
	}
	if err != nil {
		return PublishResult{}, fmt.Errorf("channel lookup: %w", err)
	}
	if ch.Trust == TrustToken {
		if err := h.checkPublisher(ctx, r, ch); err != nil {
			return PublishResult{}, err
		}
	}
	// one fetch at a time per topic, so two pings never compute the same diff
	lock := h.channelLock("fetch " + topic)
	lock.Lock()
	defer lock.Unlock()
	return h.FetchTopic(ctx, ch)
}

// FetchTopic fetches a channel's topic URI (conditionally, with the ETag and
// Last-Modified seen before) and publishes what is new: a Change List's new
// entries as change notifications, a change-notification payload as it is,
// any other content verbatim with its own Content-Type.
func (h *Hub) FetchTopic(ctx context.Context, ch Channel) (PublishResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ch.Topic, nil)
	if err != nil {
		return PublishResult{}, refuse(400, "invalid_topic", "%v", err)
	}
	h.mu.Lock()
	memo := h.fetched[ch.Topic]
	h.mu.Unlock()
	if memo.etag != "" {
		req.Header.Set("If-None-Match", memo.etag)
	}
	if memo.lastModified != "" {
		req.Header.Set("If-Modified-Since", memo.lastModified)
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return PublishResult{}, refuse(502, "fetch", "fetching the topic failed: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return PublishResult{Unchanged: true}, nil
	}
	if resp.StatusCode/100 != 2 {
		return PublishResult{}, refuse(502, "fetch", "fetching the topic answered %d", resp.StatusCode)
	}
	body, err := readLimited(resp.Body, h.cfg.MaxBody)
	if err != nil {
		return PublishResult{}, err
	}
	contentType := resp.Header.Get("Content-Type")
	if contentType == "" {
		contentType = http.DetectContentType(body)
	}
	res, err := h.publishFetched(ctx, ch, body, contentType)
	if err != nil {
		return res, err
	}
	h.mu.Lock()
	h.fetched[ch.Topic] = fetchMemo{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
	h.mu.Unlock()
	return res, nil
}

// publishFetched decides what a fetched topic body means and publishes it.
func (h *Hub) publishFetched(ctx context.Context, ch Channel, body []byte, contentType string) (PublishResult, error) {
	if isXML(contentType) {
		doc, err := changefeed.Parse(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient, MaxBytes: h.cfg.MaxBody})
		if err != nil && isChangeDocument(body, h.cfg.MaxBody) {
			// a Change List or notification that fails validation is the
			// Source's bug to hear about, not content to pass on verbatim
			return PublishResult{}, refuse(502, "invalid_topic", "the topic serves an invalid ResourceSync document: %v", err)
		}
		if err == nil {
			switch {
			case doc.Kind == changefeed.URLSet && doc.MD.Capability == changefeed.CapChangeList:
				return h.publishChangeList(ctx, ch, doc)
			case doc.Kind == changefeed.URLSet && (doc.MD.Capability == changefeed.CapChangeNotification || doc.MD.Capability == changefeed.CapChangeListNotification):
				in, err := h.notification(ch, body, contentType, "")
				if err != nil {
					return PublishResult{}, err
				}
				return h.commit(ctx, in)
			}
		}
	}
	// not ResourceSync: distribute verbatim, skipping content already sent
	return h.commit(ctx, incoming{ch: ch, body: body, contentType: contentType})
}

// isChangeDocument reports whether body's root declares itself a Change
// List or a change notification.
func isChangeDocument(body []byte, maxBytes int64) bool {
	hdr, err := changefeed.NewDecoder(bytes.NewReader(body), changefeed.Options{Mode: changefeed.Lenient, MaxBytes: maxBytes}).Header()
	if err != nil {
		return false
	}
	switch hdr.MD.Capability {
	case changefeed.CapChangeList, changefeed.CapChangeNotification, changefeed.CapChangeListNotification:
		return true
	}
	return false
}

// publishChangeList publishes the entries of a Source's Change List that
// come after the channel's last until, as change notifications whose from is
// the previous until. Entries are split into notifications of at most
// changefeed.DefaultMaxEntries. Entries whose datetime equals the previous
// until were published before and are not repeated.
func (h *Hub) publishChangeList(ctx context.Context, ch Channel, doc *changefeed.Document) (PublishResult, error) {
	lock := h.channelLock(ch.Topic)
	lock.Lock()
	m, err := h.state(ctx, ch)
	var st ChannelState
	if m != nil {
		st = m.st
	}
	lock.Unlock()
	if err != nil {
		return PublishResult{}, err
	}
	from := st.LastUntil
	if from.IsZero() {
		from = doc.MD.From.Time
	}
	var fresh []changefeed.Entry
	for _, e := range doc.Entries {
		t := entryTime(e)
		if t.IsZero() || (!st.LastUntil.IsZero() && !t.After(st.LastUntil)) {
			continue
		}
		if t.Before(from) {
			continue
		}
		fresh = append(fresh, e)
	}
	if len(fresh) == 0 {
		return PublishResult{Unchanged: true, Seq: st.LastSeq}, nil
	}
	up := doc.Link("up")
	if up == "" {
		up = ch.CapabilityList
	}
	var res PublishResult
	for start := 0; start < len(fresh); start += changefeed.DefaultMaxEntries {
		chunk := fresh[start:min(start+changefeed.DefaultMaxEntries, len(fresh))]
		until := entryTime(chunk[len(chunk)-1])
		if start+len(chunk) == len(fresh) && !doc.MD.Until.IsZero() && doc.MD.Until.Time.After(until) {
			until = doc.MD.Until.Time
		}
		body, err := encodeNotification(from, until, up, chunk)
		if err != nil {
			return res, fmt.Errorf("encode notification: %w", err)
		}
		in := incoming{ch: ch, body: body, contentType: "application/xml", from: from, until: until, resourcesync: up, rs: true, entries: len(chunk)}
		if res, err = h.commit(ctx, in); err != nil {
			return res, err
		}
		from = until
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
	if err := changefeed.Encode(&buf, doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// entryTime is when an entry's change happened: its datetime, else lastmod.
func entryTime(e changefeed.Entry) time.Time {
	if e.MD != nil && !e.MD.DateTime.IsZero() {
		return e.MD.DateTime.Time
	}
	return e.LastMod.Time
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
