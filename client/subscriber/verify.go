package subscriber

import (
	"fmt"
	"net/http"
	"time"

	"github.com/rshub/rshub/wire"
)

// SignaturePolicy says which signatures a Handler accepts on a delivery
// to a subscription made with a secret. A delivery that fails it is
// answered 2xx and discarded (WebSub §8), logged and reported to
// Config.OnDiscard.
type SignaturePolicy int

const (
	// AcceptEither, the default, verifies the Standard Webhooks headers
	// when a delivery carries any of them (timestamp within the tolerance,
	// webhook-id not seen before), else its X-Hub-Signature. A capture of
	// a delivery signed both ways can be replayed with its Standard
	// headers removed: to be replay-proof, use RequireStandard.
	AcceptEither SignaturePolicy = iota
	// RequireStandard accepts only deliveries with a valid Standard
	// Webhooks signature, a fresh timestamp and a new webhook-id; an
	// X-Hub-Signature alone is refused. Subscribe with
	// SubscribeOptions.Scheme wire.SchemeStandard or wire.SchemeBoth.
	RequireStandard
	// AcceptWebSub verifies X-Hub-Signature only and ignores the Standard
	// Webhooks headers: what a plain WebSub subscriber does.
	AcceptWebSub
)

// String returns the policy's name.
func (p SignaturePolicy) String() string {
	switch p {
	case AcceptEither:
		return "either"
	case RequireStandard:
		return "standard"
	case AcceptWebSub:
		return "websub"
	}
	return fmt.Sprintf("SignaturePolicy(%d)", int(p))
}

// verified is what checking a delivery's signature found.
type verified struct {
	scheme string    // wire.SchemeWebSub or wire.SchemeStandard
	msgID  string    // webhook-id, for wire.SchemeStandard
	key    replayKey // remembered in the replay cache, for wire.SchemeStandard
}

// verify checks the signature of a delivery to s under the Handler's
// policy and, for a Standard Webhooks signature, remembers its webhook-id.
// Its errors wrap wire.ErrNotSigned, wire.ErrSignatureMismatch,
// wire.ErrStaleTimestamp, ErrReplayed or ErrReplayCacheFull.
func (h *Handler) verify(s Subscription, hdr http.Header, body []byte) (verified, error) {
	id, ts, sig := hdr.Get(wire.HeaderWebhookID), hdr.Get(wire.HeaderWebhookTimestamp), hdr.Get(wire.HeaderWebhookSignature)
	standard := id != "" || ts != "" || sig != ""
	if h.cfg.Signatures == AcceptWebSub || h.cfg.Signatures == AcceptEither && !standard {
		if err := wire.Verify(hdr.Get(wire.HeaderSignature), s.Secret, body); err != nil {
			return verified{}, fmt.Errorf("subscriber: X-Hub-Signature: %w", err)
		}
		return verified{scheme: wire.SchemeWebSub}, nil
	}
	if !standard {
		return verified{}, fmt.Errorf("subscriber: a Standard Webhooks signature is required: %w", wire.ErrNotSigned)
	}
	now := h.cfg.Now()
	at, err := wire.VerifyStandard(s.Secret, id, ts, sig, body, now, h.cfg.Tolerance)
	if err != nil {
		return verified{}, fmt.Errorf("subscriber: Standard Webhooks signature: %w", err)
	}
	v := verified{scheme: wire.SchemeStandard, msgID: id, key: newReplayKey(s.ID, id)}
	// remembered while the timestamp check would still pass it
	if err := h.replay.add(v.key, at.Add(h.cfg.Tolerance), now); err != nil {
		return verified{}, fmt.Errorf("webhook-id %q: %w", clipID(id), err)
	}
	return v, nil
}

// clipID bounds a webhook-id quoted in an error or a log.
func clipID(id string) string {
	if len(id) > 128 {
		return id[:128] + "…"
	}
	return id
}

// tolerance returns the configured tolerance or its default.
func tolerance(d time.Duration) time.Duration {
	if d <= 0 {
		return wire.DefaultTolerance
	}
	return d
}
