package hub

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// ChannelView is a channel with its progress, as the admin API shows it.
type ChannelView struct {
	Channel
	State ChannelState `json:"state"`
}

// MarshalJSON writes the view with the state's gaps and resets as [] when
// there are none.
func (v ChannelView) MarshalJSON() ([]byte, error) {
	type state struct {
		ChannelState
		Gaps   []Gap             `json:"gaps"`
		Resets []ContinuityReset `json:"resets"`
	}
	return json.Marshal(struct {
		Channel
		State state `json:"state"`
	}{v.Channel, state{v.State, nonNil(v.State.Gaps), nonNil(v.State.Resets)}})
}

// ContinuityView is a channel's continuity anchor as the admin API shows it
// (GET /admin/channels/{name}/continuity): the until the next notification
// is checked against, how the channel got there and the gaps seen.
type ContinuityView struct {
	Channel string `json:"channel"`
	Topic   string `json:"topic"`
	// Anchored is false when the channel has no anchor: the next
	// notification is accepted as the first.
	Anchored  bool      `json:"anchored"`
	LastUntil time.Time `json:"lastUntil"` // the anchor
	LastFrom  time.Time `json:"lastFrom"`
	LastSeq   uint64    `json:"lastSeq"`
	Published uint64    `json:"published"`
	// MaxClockSkew is how far ahead of the hub's clock a notification's
	// times may lie, in seconds.
	MaxClockSkew int64             `json:"maxClockSkewSeconds"`
	Gaps         []Gap             `json:"gaps"`
	Resets       []ContinuityReset `json:"resets"`
}

// registerAdmin adds the admin API under /admin/ when a token is set.
func (h *Hub) registerAdmin(mux *http.ServeMux) {
	if h.cfg.AdminToken == "" {
		return
	}
	mux.Handle("GET /admin/channels", h.admin(h.adminListChannels))
	mux.Handle("POST /admin/channels", h.admin(h.adminPutChannel))
	mux.Handle("GET /admin/channels/{name}", h.admin(h.adminGetChannel))
	mux.Handle("DELETE /admin/channels/{name}", h.admin(h.adminDeleteChannel))
	mux.Handle("GET /admin/channels/{name}/continuity", h.admin(h.adminContinuity))
	mux.Handle("POST /admin/channels/{name}/continuity/reset", h.admin(h.adminResetContinuity))
	mux.Handle("GET /admin/subscriptions", h.admin(h.adminListSubs))
	mux.Handle("GET /admin/subscriptions/{id}", h.admin(h.adminGetSub))
	mux.Handle("DELETE /admin/subscriptions/{id}", h.admin(h.adminDeleteSub))
	mux.Handle("GET /admin/subscriptions/{id}/deadletters", h.admin(h.adminDeadLetters))
	mux.Handle("POST /admin/subscriptions/{id}/deadletters/{dl}/redrive", h.admin(h.adminRedrive))
	mux.Handle("GET /admin/deliveries", h.admin(h.adminDeliveries))
}

// admin wraps a handler with the admin token check. Errors become plain
// text: an adminError its status, ErrNotFound 404, anything else (the store
// or the log did not answer) 503 with Retry-After. A POST answers 201
// unless the handler returns an adminOK.
func (h *Hub) admin(fn func(http.ResponseWriter, *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rshub-admin"`)
			plainError(w, http.StatusUnauthorized, "admin API needs Authorization: Bearer <admin token>")
			return
		}
		v, err := fn(w, r)
		if err != nil {
			h.adminFail(w, r, err)
			return
		}
		if v == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		status := http.StatusOK
		if ok, isOK := v.(adminOK); isOK {
			v = ok.v
		} else if r.Method == http.MethodPost {
			status = http.StatusCreated
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	})
}

func (h *Hub) adminFail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *adminError
	switch {
	case errors.As(err, &ae):
		plainError(w, ae.status, ae.msg)
	case errors.Is(err, ErrNotFound):
		plainError(w, http.StatusNotFound, "not found: "+Truncate(err.Error()))
	default:
		h.log.Error("admin API", "method", r.Method, "path", Truncate(r.URL.Path), "err", Truncate(err.Error()))
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		plainError(w, http.StatusServiceUnavailable, "the hub's store or log did not answer; retry later")
	}
}

type adminError struct {
	status int
	msg    string
}

func (e *adminError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &adminError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// adminOK is a POST's answer that is a 200, not a 201.
type adminOK struct{ v any }

// nonNil returns list, or an empty list of its type when it is nil, so
// that JSON lists are [] and never null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// redactChannel hides the publisher token.
func redactChannel(c Channel) Channel {
	if c.Token != "" {
		c.Token = "(set)"
	}
	return c
}

// redactSub hides the subscription secret.
func redactSub(s Subscription) Subscription {
	if s.Secret != "" {
		s.Secret = "(set)"
	}
	return s
}

// pathChannel returns the channel named by the {name} path value: 400 for
// a name no channel can have, 404 for one no channel has.
func (h *Hub) pathChannel(r *http.Request) (Channel, error) {
	name := r.PathValue("name")
	if !ValidChannelName(name) {
		return Channel{}, badRequest("channel name %q: names are 1-%d characters of A-Z a-z 0-9 - _", Truncate(name), maxChannelName)
	}
	c, err := h.ChannelByName(r.Context(), name)
	if errors.Is(err, ErrNotFound) {
		return Channel{}, &adminError{http.StatusNotFound, "no channel named " + name}
	}
	return c, err
}

// validSubscriptionID reports whether id has the shape SubscriptionID
// gives: 32 lowercase hex digits.
func validSubscriptionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// validDeadLetterID reports whether id can name a dead letter: 1 to
// MaxIDLen characters of A-Z a-z 0-9 - _ (the delivery engine uses the
// zero-padded log sequence).
func validDeadLetterID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// pathSubID returns the {id} path value, 400 when it cannot be a
// subscription ID.
func pathSubID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !validSubscriptionID(id) {
		return "", badRequest("subscription id %q: subscription IDs are 32 lowercase hex digits", Truncate(id))
	}
	return id, nil
}

// pathSub returns the subscription named by the {id} path value.
func (h *Hub) pathSub(r *http.Request) (Subscription, error) {
	id, err := pathSubID(r)
	if err != nil {
		return Subscription{}, err
	}
	s, err := h.cfg.Store.Subscription(r.Context(), id)
	if errors.Is(err, ErrNotFound) {
		return Subscription{}, &adminError{http.StatusNotFound, "no subscription " + id}
	}
	return s, err
}

func (h *Hub) adminListChannels(_ http.ResponseWriter, r *http.Request) (any, error) {
	chs, err := h.cfg.Store.Channels(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]ChannelView, 0, len(chs))
	for _, c := range chs {
		st, err := h.ChannelState(r.Context(), c.Topic)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		out = append(out, ChannelView{Channel: redactChannel(c), State: st})
	}
	return out, nil
}

func (h *Hub) adminPutChannel(_ http.ResponseWriter, r *http.Request) (any, error) {
	var c Channel
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxFormBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, badRequest("channel JSON: %s", Truncate(err.Error()))
	}
	c, err := h.PutChannel(r.Context(), c)
	if err != nil {
		return nil, badRequest("%s", Truncate(err.Error()))
	}
	return redactChannel(c), nil
}

func (h *Hub) adminGetChannel(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := h.pathChannel(r)
	if err != nil {
		return nil, err
	}
	st, err := h.ChannelState(r.Context(), c.Topic)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return ChannelView{Channel: redactChannel(c), State: st}, nil
}

func (h *Hub) adminDeleteChannel(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := h.pathChannel(r)
	if err != nil {
		return nil, err
	}
	h.forgetChannel(c.Topic)
	return nil, h.cfg.Store.DeleteChannel(r.Context(), c.Topic)
}

// continuityView shows st as the admin API does.
func (h *Hub) continuityView(c Channel, st ChannelState) ContinuityView {
	return ContinuityView{
		Channel:      c.Name,
		Topic:        c.Topic,
		Anchored:     !st.LastUntil.IsZero(),
		LastUntil:    st.LastUntil,
		LastFrom:     st.LastFrom,
		LastSeq:      st.LastSeq,
		Published:    st.Published,
		MaxClockSkew: int64(h.maxClockSkew() / time.Second),
		Gaps:         nonNil(st.Gaps),
		Resets:       nonNil(st.Resets),
	}
}

func (h *Hub) adminContinuity(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := h.pathChannel(r)
	if err != nil {
		return nil, err
	}
	st, err := h.Continuity(r.Context(), c)
	if err != nil {
		return nil, err
	}
	return h.continuityView(c, st), nil
}

// maxResetBody bounds the JSON body of a continuity reset.
const maxResetBody = 4 << 10

// adminResetContinuity sets the channel's continuity anchor to the body's
// "until" (RFC 3339), or clears it when the body is empty or has none.
func (h *Hub) adminResetContinuity(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := h.pathChannel(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxResetBody+1))
	if err != nil {
		return nil, badRequest("reading the body: %s", Truncate(err.Error()))
	}
	if len(body) > maxResetBody {
		return nil, &adminError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", maxResetBody)}
	}
	var req struct {
		Until *string `json:"until"`
	}
	if strings.TrimSpace(string(body)) != "" {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, badRequest(`reset JSON: %s; send {"until": "<RFC 3339 time>"}, or nothing to clear the anchor`, Truncate(err.Error()))
		}
	}
	var until time.Time
	if req.Until != nil && *req.Until != "" {
		until, err = time.Parse(time.RFC3339Nano, *req.Until)
		if err != nil {
			return nil, badRequest("until %q is not an RFC 3339 time", Truncate(*req.Until))
		}
		if limit := h.cfg.Now().Add(h.maxClockSkew()); until.After(limit) {
			return nil, badRequest("until %s is in the future: the anchor may be at most %s ahead of the hub's clock (%s)",
				fmtTime(until), h.maxClockSkew(), fmtTime(limit))
		}
	}
	st, err := h.ResetContinuity(r.Context(), c, until, "admin API from "+r.RemoteAddr)
	if err != nil {
		return nil, err
	}
	return adminOK{h.continuityView(c, st)}, nil
}

func (h *Hub) adminListSubs(_ http.ResponseWriter, r *http.Request) (any, error) {
	topic := r.URL.Query().Get("topic")
	if err := checkLen("topic", topic, MaxTopicLen); err != nil {
		return nil, badRequest("%v", err)
	}
	subs, err := h.cfg.Store.Subscriptions(r.Context(), topic)
	if err != nil {
		return nil, err
	}
	for i := range subs {
		subs[i] = redactSub(subs[i])
	}
	return nonNil(subs), nil
}

func (h *Hub) adminGetSub(_ http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.pathSub(r)
	if err != nil {
		return nil, err
	}
	return redactSub(s), nil
}

// adminDeleteSub ends a subscription and tells the subscriber (WebSub §5.2:
// a hub may deny a subscription at any time).
func (h *Hub) adminDeleteSub(_ http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.pathSub(r)
	if err != nil {
		return nil, err
	}
	if err := h.cfg.Store.DeleteSubscription(r.Context(), s.ID); err != nil {
		return nil, err
	}
	if h.cfg.Activator != nil {
		h.cfg.Activator.Deactivate(s.ID)
	}
	go h.deny(context.WithoutCancel(r.Context()), s.Callback, s.Topic, "subscription removed by the hub operator")
	return nil, nil
}

func (h *Hub) adminDeadLetters(_ http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.pathSub(r)
	if err != nil {
		return nil, err
	}
	dls, err := h.cfg.Store.DeadLetters(r.Context(), s.ID)
	if err != nil {
		return nil, err
	}
	return nonNil(dls), nil
}

func (h *Hub) adminRedrive(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, err := pathSubID(r)
	if err != nil {
		return nil, err
	}
	dl := r.PathValue("dl")
	if !validDeadLetterID(dl) {
		return nil, badRequest("dead letter id %q: dead letter IDs are 1-%d characters of A-Z a-z 0-9 - _", Truncate(dl), MaxIDLen)
	}
	if h.cfg.Redriver == nil {
		return nil, &adminError{http.StatusNotImplemented, "no delivery engine to redrive with"}
	}
	if err := h.cfg.Redriver.Redrive(r.Context(), id, dl); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, err
		}
		// the callback failed again, or the engine could not deliver
		return nil, &adminError{http.StatusBadGateway, "redrive failed: " + Truncate(err.Error())}
	}
	return map[string]string{"status": "redriven"}, nil
}

// adminDeliveries reports the delivery engine's per-subscription health.
func (h *Hub) adminDeliveries(_ http.ResponseWriter, _ *http.Request) (any, error) {
	if h.cfg.DeliveryStats == nil {
		return []any{}, nil
	}
	v := h.cfg.DeliveryStats()
	if rv := reflect.ValueOf(v); v == nil || rv.Kind() == reflect.Slice && rv.IsNil() {
		return []any{}, nil
	}
	return v, nil
}
