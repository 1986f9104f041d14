package admin

import (
	"errors"
	"net/http"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// redactSub hides the subscription secret.
func redactSub(s hub.Subscription) hub.Subscription {
	if s.Secret != "" {
		s.Secret = "(set)"
	}
	return s
}

// validSubscriptionID reports whether id has the shape hub.SubscriptionID
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
// hub.MaxIDLen characters of A-Z a-z 0-9 - _ (the delivery engine uses the
// zero-padded log sequence).
func validDeadLetterID(id string) bool {
	if id == "" || len(id) > hub.MaxIDLen {
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
		return "", badRequest("subscription id %q: subscription IDs are 32 lowercase hex digits", wire.Clip(id))
	}
	return id, nil
}

// pathSub returns the subscription named by the {id} path value.
func (a *API) pathSub(r *http.Request) (hub.Subscription, error) {
	id, err := pathSubID(r)
	if err != nil {
		return hub.Subscription{}, err
	}
	s, err := a.cfg.Store.Subscription(r.Context(), id)
	if errors.Is(err, hub.ErrNotFound) {
		return hub.Subscription{}, &apiError{http.StatusNotFound, "no subscription " + id}
	}
	return s, err
}

func (a *API) getSub(r *http.Request) (any, error) {
	s, err := a.pathSub(r)
	if err != nil {
		return nil, err
	}
	return redactSub(s), nil
}

// deleteSub ends a subscription and tells the subscriber (WebSub §5.2: a
// hub may deny a subscription at any time).
func (a *API) deleteSub(r *http.Request) (any, error) {
	s, err := a.pathSub(r)
	if err != nil {
		return nil, err
	}
	return nil, a.cfg.Hub.DenySubscription(r.Context(), s, "subscription removed by the hub operator")
}

func (a *API) deadLetters(r *http.Request) (any, error) {
	s, err := a.pathSub(r)
	if err != nil {
		return nil, err
	}
	dls, err := a.cfg.Store.DeadLetters(r.Context(), s.ID)
	if err != nil {
		return nil, err
	}
	return nonNil(dls), nil
}

func (a *API) redrive(r *http.Request) (any, error) {
	id, err := pathSubID(r)
	if err != nil {
		return nil, err
	}
	dl := r.PathValue("dl")
	if !validDeadLetterID(dl) {
		return nil, badRequest("dead letter id %q: dead letter IDs are 1-%d characters of A-Z a-z 0-9 - _", wire.Clip(dl), hub.MaxIDLen)
	}
	if a.cfg.Deliveries == nil {
		return nil, &apiError{http.StatusNotImplemented, "no delivery engine to redrive with"}
	}
	if err := a.cfg.Deliveries.Redrive(r.Context(), id, dl); err != nil {
		if errors.Is(err, hub.ErrNotFound) {
			return nil, err
		}
		// the callback failed again, or the engine could not deliver
		return nil, &apiError{http.StatusBadGateway, "redrive failed: " + wire.Clip(err.Error())}
	}
	return map[string]string{"status": "redriven"}, nil
}
