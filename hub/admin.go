package hub

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// ChannelView is a channel with its progress, as the admin API shows it.
type ChannelView struct {
	Channel
	State ChannelState `json:"state"`
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
	mux.Handle("GET /admin/subscriptions", h.admin(h.adminListSubs))
	mux.Handle("GET /admin/subscriptions/{id}", h.admin(h.adminGetSub))
	mux.Handle("DELETE /admin/subscriptions/{id}", h.admin(h.adminDeleteSub))
	mux.Handle("GET /admin/subscriptions/{id}/deadletters", h.admin(h.adminDeadLetters))
	mux.Handle("POST /admin/subscriptions/{id}/deadletters/{dl}/redrive", h.admin(h.adminRedrive))
	mux.Handle("GET /admin/deliveries", h.admin(h.adminDeliveries))
}

// admin wraps a handler with the admin token check.
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
			status := http.StatusInternalServerError
			var ae *adminError
			switch {
			case errors.As(err, &ae):
				status = ae.status
			case errors.Is(err, ErrNotFound):
				status = http.StatusNotFound
			default:
				h.log.Error("admin API", "path", r.URL.Path, "err", err)
			}
			plainError(w, status, err.Error())
			return
		}
		if v == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(v)
	})
}

type adminError struct {
	status int
	msg    string
}

func (e *adminError) Error() string { return e.msg }

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
		return nil, &adminError{http.StatusBadRequest, "channel JSON: " + err.Error()}
	}
	c, err := h.PutChannel(r.Context(), c)
	if err != nil {
		return nil, &adminError{http.StatusBadRequest, err.Error()}
	}
	return redactChannel(c), nil
}

func (h *Hub) adminGetChannel(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := h.ChannelByName(r.Context(), r.PathValue("name"))
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
	c, err := h.ChannelByName(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	h.forgetChannel(c.Topic)
	return nil, h.cfg.Store.DeleteChannel(r.Context(), c.Topic)
}

func (h *Hub) adminListSubs(_ http.ResponseWriter, r *http.Request) (any, error) {
	subs, err := h.cfg.Store.Subscriptions(r.Context(), r.URL.Query().Get("topic"))
	if err != nil {
		return nil, err
	}
	for i := range subs {
		subs[i] = redactSub(subs[i])
	}
	return subs, nil
}

func (h *Hub) adminGetSub(_ http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.cfg.Store.Subscription(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return redactSub(s), nil
}

// adminDeleteSub ends a subscription and tells the subscriber (WebSub §5.2:
// a hub may deny a subscription at any time).
func (h *Hub) adminDeleteSub(_ http.ResponseWriter, r *http.Request) (any, error) {
	s, err := h.cfg.Store.Subscription(r.Context(), r.PathValue("id"))
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
	if _, err := h.cfg.Store.Subscription(r.Context(), r.PathValue("id")); err != nil {
		return nil, err
	}
	return h.cfg.Store.DeadLetters(r.Context(), r.PathValue("id"))
}

func (h *Hub) adminRedrive(_ http.ResponseWriter, r *http.Request) (any, error) {
	if h.cfg.Redriver == nil {
		return nil, &adminError{http.StatusNotImplemented, "no delivery engine to redrive with"}
	}
	if err := h.cfg.Redriver.Redrive(r.Context(), r.PathValue("id"), r.PathValue("dl")); err != nil {
		return nil, err
	}
	return map[string]string{"status": "redriven"}, nil
}

// adminDeliveries reports the delivery engine's per-subscription health.
func (h *Hub) adminDeliveries(_ http.ResponseWriter, _ *http.Request) (any, error) {
	if h.cfg.DeliveryStats == nil {
		return []any{}, nil
	}
	return h.cfg.DeliveryStats(), nil
}
