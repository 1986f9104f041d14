package hub

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/rshub/rshub/wire"
)

// Bounds of a subscription's deliveries per second (wire.ParamRate,
// Subscription.Rate and OperatorRate): from one delivery every 100
// seconds to 10,000 a second.
const (
	MinRate float64 = 0.01
	MaxRate float64 = 10000
)

// ParseRate reads a deliveries-per-second limit: a decimal number (digits
// with at most one point, no sign, exponent or hexadecimal form) between
// MinRate and MaxRate.
func ParseRate(v string) (float64, error) {
	if v == "" || len(v) > 16 || strings.Trim(v, "0123456789.") != "" || strings.Count(v, ".") > 1 {
		return 0, fmt.Errorf("%s must be a decimal number of deliveries per second, got %q", wire.ParamRate, wire.Clip(v))
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be a decimal number of deliveries per second, got %q", wire.ParamRate, wire.Clip(v))
	}
	if err := CheckRate(r); err != nil {
		return 0, err
	}
	return r, nil
}

// CheckRate refuses a deliveries-per-second limit outside MinRate to
// MaxRate (NaN included).
func CheckRate(r float64) error {
	if !(r >= MinRate && r <= MaxRate) {
		return fmt.Errorf("%s must be %g to %g deliveries per second, got %g", wire.ParamRate, MinRate, MaxRate, r)
	}
	return nil
}

// SetOperatorRate sets the hub operator's deliveries-per-second limit of
// the subscription id (Subscription.OperatorRate; 0 removes it) and tells
// the delivery engine, whose queue applies it from its next delivery. A
// rate outside MinRate to MaxRate is refused; a missing subscription is
// ErrNotFound.
func (h *Hub) SetOperatorRate(ctx context.Context, id string, rate float64) (Subscription, error) {
	if rate != 0 {
		if err := CheckRate(rate); err != nil {
			return Subscription{}, err
		}
	}
	unlock, err := h.lockSub(ctx, id)
	if err != nil {
		return Subscription{}, err
	}
	defer unlock()
	sub, err := h.cfg.Store.Subscription(ctx, id)
	if err != nil {
		return Subscription{}, err
	}
	sub.OperatorRate = rate
	if err := h.cfg.Store.PutSubscription(ctx, sub); err != nil {
		return Subscription{}, fmt.Errorf("hub: storing the rate of subscription %s: %w", id, err)
	}
	if h.cfg.Activator != nil && sub.State == SubActive {
		h.cfg.Activator.Activate(sub)
	}
	return sub, nil
}
