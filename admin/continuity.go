package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// ContinuityView is a channel's continuity anchor as the admin API shows it
// (GET /admin/channels/{name}/continuity): the until the next notification
// is checked against, how the channel got there and the gaps seen.
type ContinuityView struct {
	Channel string `json:"channel"`
	Topic   string `json:"topic"`
	// Anchored is false when the channel has no anchor: the next
	// notification is accepted as the first.
	Anchored  bool      `json:"anchored"`
	LastUntil time.Time `json:"lastUntil,omitzero"` // the anchor
	LastFrom  time.Time `json:"lastFrom,omitzero"`
	LastSeq   uint64    `json:"lastSeq"`
	Published uint64    `json:"published"`
	// MaxClockSkew is how far ahead of the hub's clock a notification's
	// times may lie, in seconds.
	MaxClockSkew int64                 `json:"maxClockSkewSeconds"`
	Gaps         []hub.Gap             `json:"gaps"`
	Resets       []hub.ContinuityReset `json:"resets"`
}

// continuityView shows st as the admin API does.
func (a *API) continuityView(c hub.Channel, st hub.ChannelState) ContinuityView {
	return ContinuityView{
		Channel:      c.Name,
		Topic:        c.Topic,
		Anchored:     !st.LastUntil.IsZero(),
		LastUntil:    st.LastUntil,
		LastFrom:     st.LastFrom,
		LastSeq:      st.LastSeq,
		Published:    st.Published,
		MaxClockSkew: int64(a.cfg.Hub.MaxClockSkew() / time.Second),
		Gaps:         nonNil(st.Gaps),
		Resets:       nonNil(st.Resets),
	}
}

func (a *API) continuity(r *http.Request) (any, error) {
	c, err := a.pathChannel(r)
	if err != nil {
		return nil, err
	}
	st, err := a.cfg.Hub.Continuity(r.Context(), c)
	if err != nil {
		return nil, err
	}
	return a.continuityView(c, st), nil
}

// maxResetBody bounds the JSON body of a continuity reset.
const maxResetBody = 4 << 10

// resetContinuity sets the channel's continuity anchor to the body's
// "until" (RFC 3339), or clears it when the body is empty or has none.
func (a *API) resetContinuity(r *http.Request) (any, error) {
	if err := a.readOnlyChannels(); err != nil {
		return nil, err
	}
	c, err := a.pathChannel(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxResetBody+1))
	if err != nil {
		return nil, badRequest("reading the body: %s", wire.Clip(err.Error()))
	}
	if len(body) > maxResetBody {
		return nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the body exceeds %d bytes", maxResetBody)}
	}
	var req struct {
		Until *string `json:"until"`
	}
	if strings.TrimSpace(string(body)) != "" {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return nil, badRequest(`reset JSON: %s; send {"until": "<RFC 3339 time>"}, or nothing to clear the anchor`, wire.Clip(err.Error()))
		}
	}
	var until time.Time
	if req.Until != nil && *req.Until != "" {
		until, err = time.Parse(time.RFC3339Nano, *req.Until)
		if err != nil {
			return nil, badRequest("until %q is not an RFC 3339 time", wire.Clip(*req.Until))
		}
		skew := a.cfg.Hub.MaxClockSkew()
		if limit := a.cfg.Hub.Now().Add(skew); until.After(limit) {
			return nil, badRequest("until %s is in the future: the anchor may be at most %s ahead of the hub's clock (%s)",
				until.UTC().Format(time.RFC3339Nano), skew, limit.UTC().Format(time.RFC3339Nano))
		}
	}
	st, err := a.cfg.Hub.ResetContinuity(r.Context(), c, until, "admin API from "+r.RemoteAddr)
	if err != nil {
		return nil, err
	}
	return ok{a.continuityView(c, st)}, nil
}
