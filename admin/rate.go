package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// maxPatchBody bounds the JSON body of a subscription's change.
const maxPatchBody = 4 << 10

// subPatch is the body of PATCH /admin/subscriptions/{id}.
type subPatch struct {
	// Rate is the operator's deliveries per second of the subscription,
	// over the one it asked for; 0 removes it.
	Rate *float64 `json:"rate"`
}

// patchSub changes what the operator sets of a subscription: its rate.
func (a *API) patchSub(r *http.Request) (any, error) {
	id, err := pathSubID(r)
	if err != nil {
		return nil, err
	}
	var p subPatch
	dec := json.NewDecoder(io.LimitReader(r.Body, maxPatchBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, badRequest("subscription change: %s", wire.Clip(err.Error()))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("subscription change: one JSON object, nothing after it")
	}
	if p.Rate == nil {
		return nil, badRequest(`subscription change: give {"rate": n}, deliveries per second (0 removes the operator's rate)`)
	}
	if *p.Rate != 0 {
		if err := hub.CheckRate(*p.Rate); err != nil {
			return nil, badRequest("rate: %v (0 removes the operator's rate)", err)
		}
	}
	s, err := a.cfg.Hub.SetOperatorRate(r.Context(), id, *p.Rate)
	if errors.Is(err, hub.ErrNotFound) {
		return nil, &apiError{http.StatusNotFound, "no subscription " + id}
	}
	if err != nil {
		return nil, err
	}
	return redactSub(s), nil
}
