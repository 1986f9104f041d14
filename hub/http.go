package hub

import (
	"cmp"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// maxFormBytes bounds subscription and publish-ping forms.
const maxFormBytes = 64 << 10

// Register adds the hub's routes to mux: the hub URL and hosted topics.
// The admin API is package admin.
func (h *Hub) Register(mux *http.ServeMux) {
	path := h.hubURL.Path
	path = cmp.Or(path, "/")
	if path == "/" {
		mux.HandleFunc("/{$}", h.serveHubURL)
	} else {
		mux.HandleFunc(path, h.serveHubURL)
	}
	mux.HandleFunc(wire.PatternTopic, h.serveTopic)
}

// serveHubURL is the hub URL: POST for subscriptions, publish pings and
// ResourceSync notifications; GET says what this is.
func (h *Hub) serveHubURL(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodHead:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Link", "<"+h.cfg.HubURL+`>; rel="hub"`)
		_, _ = fmt.Fprintf(w, "rshub: a WebSub hub for ResourceSync change notifications.\nPOST hub.mode=subscribe|unsubscribe|publish (form) or an application/xml change-notification with Link rel=\"self\" and rel=\"hub\" to %s\n", h.cfg.HubURL)
		if h.cfg.Home != "" {
			_, _ = fmt.Fprintln(w, h.cfg.Home)
		}
		return
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		h.writeRefusal(w, refuse(ReasonMethod, "the hub URL takes POST"))
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		h.writeRefusal(w, refuse(ReasonContentType, "Content-Type must be application/x-www-form-urlencoded or application/xml"))
		return
	}
	switch mt {
	case "application/x-www-form-urlencoded":
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if xmlBody(r) {
			h.writeRefusal(w, refuse(ReasonContentType, xmlAsForm))
			return
		}
		if err := r.ParseForm(); err != nil {
			r := ReasonRead
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				r = ReasonTooLarge
			}
			h.writeRefusal(w, refuse(r, "bad form: %v", err))
			return
		}
		form := r.PostForm
		if err := checkFormLimits(form); err != nil {
			h.writeRefusal(w, refuse(ReasonTooLong, "%v", err))
			return
		}
		switch form.Get("hub.mode") {
		case "subscribe", "unsubscribe":
			h.handleSubscription(w, r, form)
		case "publish":
			h.handlePublishPing(w, r, form)
		default:
			h.writeRefusal(w, refuse(ReasonMode, "hub.mode must be subscribe, unsubscribe or publish, got %q", wire.Clip(form.Get("hub.mode"))))
		}
	case "application/xml", "text/xml":
		for _, l := range wire.ParseLinks(r.Header.Values(wire.HeaderLink)) {
			if err := checkLen("a Link URI", l.Href, MaxTopicLen); err != nil {
				h.writeRefusal(w, refuse(ReasonTooLong, "%v", err))
				return
			}
		}
		h.handleFatPing(w, r, r.Header.Get("Content-Type"))
	default:
		h.writeRefusal(w, refuse(ReasonContentType, "Content-Type %q: the hub takes application/x-www-form-urlencoded or application/xml", wire.Clip(mt)))
	}
}

// serveTopic answers HEAD and GET on a topic the hub hosts (RS Change
// Notification 1.0.1 §4.1): the Link header of topicLinks, and the
// channel's most recent notification as an application/xml body (200), or
// 204 No Content, with the same Link header, while the channel has none.
func (h *Hub) serveTopic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.writeRefusal(w, refuse(ReasonMethod, "a topic takes GET or HEAD"))
		return
	}
	name := r.PathValue("name")
	if !ValidChannelName(name) {
		h.writeRefusal(w, refuse(ReasonUnknownChannel, "no hosted topic here (channel names are 1-64 characters of A-Z a-z 0-9 - _)"))
		return
	}
	ch, err := h.ChannelByName(r.Context(), name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		h.writeRefusal(w, unavailable("the state store", err))
		return
	}
	d, err := h.enterChannel(r.Context(), r, access.Subscribe, ch, err == nil && ch.Hosted)
	if err != nil {
		h.writeRefusal(w, err)
		return
	}
	if !d.Found {
		h.writeRefusal(w, refuse(ReasonUnknownChannel, "no hosted topic here"))
		return
	}
	links, err := h.topicLinks(r.Context(), ch)
	if err != nil {
		h.writeRefusal(w, unavailable("the state store", err))
		return
	}
	w.Header().Set("Link", links)
	if ch.Private {
		// for its reader only: a shared cache must not keep it (the token
		// may ride in the query string or a cookie)
		w.Header().Set("Cache-Control", "private, no-cache")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	var body []byte
	if st, err := h.ChannelState(r.Context(), ch.Topic); err == nil && st.LastSeq > 0 {
		if rec, err := h.cfg.Log.Next(r.Context(), ch.Name, st.LastSeq); err == nil && rec.Seq == st.LastSeq {
			body = rec.Body
		}
	}
	if len(body) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// checkFormLimits refuses a form naming a topic or callback longer than
// the documented limits (MaxTopicLen, MaxCallbackLen).
func checkFormLimits(form url.Values) error {
	for _, name := range []string{"hub.topic", "hub.url"} {
		for _, v := range form[name] {
			if err := checkLen(name, v, MaxTopicLen); err != nil {
				return err
			}
		}
	}
	for _, v := range form["hub.callback"] {
		if err := checkLen("hub.callback", v, MaxCallbackLen); err != nil {
			return err
		}
	}
	return nil
}
