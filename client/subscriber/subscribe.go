package subscriber

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/wire"
)

// DefaultVerifyTimeout bounds the wait for the hub's verification GET.
const DefaultVerifyTimeout = 30 * time.Second

// Subscription is one subscription this Handler made.
type Subscription struct {
	ID       string        `json:"id"`
	Hub      string        `json:"hub"`
	Topic    string        `json:"topic"`
	Callback string        `json:"callback"` // the callback URL given to the hub
	Secret   string        `json:"secret,omitempty"`
	Lease    time.Duration `json:"lease"`    // granted by the hub
	Verified time.Time     `json:"verified"` // when the hub verified it
	// Scheme is the signature scheme asked of the hub
	// (wire.ParamSignatureScheme); "" asked for none.
	Scheme string `json:"scheme,omitempty"`
	// Filter is the entry filter asked of the hub (wire.ParamFilterPrefix,
	// wire.ParamFilterChange); nil asked for none.
	Filter *changefeed.Filter `json:"filter,omitempty"`
}

// Expires returns when the lease ends.
func (s Subscription) Expires() time.Time { return s.Verified.Add(s.Lease) }

// SubscribeOptions tunes a subscribe request.
type SubscribeOptions struct {
	// ID reuses a subscription id (and so its callback URL), for example
	// one kept from an earlier run; empty makes a new random one.
	ID string
	// Secret is the hub.secret; empty makes a random one unless NoSecret.
	Secret   string
	NoSecret bool
	Lease    time.Duration // requested lease; 0 lets the hub choose
	// VerifyTimeout bounds the wait for verification; default
	// DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// Scheme asks the hub to sign deliveries with wire.SchemeWebSub
	// (X-Hub-Signature), wire.SchemeStandard (Standard Webhooks) or
	// wire.SchemeBoth, sent as wire.ParamSignatureScheme; "" asks nothing
	// (the hub's default). A hub that does not know the parameter ignores
	// it and signs with X-Hub-Signature. With SchemeStandard or SchemeBoth
	// a random secret is a Standard Webhooks secret, "whsec_<base64 of 32
	// bytes>".
	Scheme string
	// Filter asks the hub to deliver only the entries it selects, sent as
	// wire.ParamFilterPrefix (one per prefix) and wire.ParamFilterChange
	// (comma-separated); the zero Filter asks nothing. A hub that does not
	// know the parameters ignores them and delivers every entry.
	Filter changefeed.Filter
}

// RandomStandardSecret returns a new Standard Webhooks secret:
// "whsec_" and the standard base64 of 32 random bytes.
func RandomStandardSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return wire.StandardSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// RandomToken returns n random bytes in hex.
func RandomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// CallbackFor returns the callback URL of subscription id.
func (h *Handler) CallbackFor(id string) string {
	sep := "?"
	if strings.Contains(h.cfg.Callback, "?") {
		sep = "&"
	}
	return h.cfg.Callback + sep + "sub=" + url.QueryEscape(id)
}

// Subscribe asks hub for a subscription to topic and waits until the hub
// verifies it (or denies it, or the wait times out). Subscribing again
// with the same ID renews the subscription (WebSub §5.1: the hub replaces
// it once verified); deliveries for it are accepted throughout.
func (h *Handler) Subscribe(ctx context.Context, hub, topic string, opt SubscribeOptions) (Subscription, error) {
	if !wire.ValidScheme(opt.Scheme) {
		return Subscription{}, fmt.Errorf("subscriber: SubscribeOptions.Scheme must be %s, %s or %s, got %q", wire.SchemeWebSub, wire.SchemeStandard, wire.SchemeBoth, opt.Scheme)
	}
	s := Subscription{ID: opt.ID, Hub: hub, Topic: topic, Secret: opt.Secret, Scheme: opt.Scheme}
	if !opt.Filter.IsZero() {
		f := opt.Filter
		s.Filter = &f
	}
	if s.ID == "" {
		s.ID = RandomToken(12)
	}
	if s.Secret == "" && !opt.NoSecret {
		if opt.Scheme == wire.SchemeStandard || opt.Scheme == wire.SchemeBoth {
			s.Secret = RandomStandardSecret()
		} else {
			s.Secret = RandomToken(24)
		}
	}
	if opt.NoSecret {
		s.Secret = ""
	}
	s.Callback = h.CallbackFor(s.ID)
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {s.Callback}}
	if opt.Lease > 0 {
		form.Set("hub.lease_seconds", strconv.FormatInt(int64(opt.Lease/time.Second), 10))
	}
	if s.Secret != "" {
		form.Set("hub.secret", s.Secret)
	}
	if s.Scheme != "" {
		form.Set(wire.ParamSignatureScheme, s.Scheme)
	}
	if s.Filter != nil {
		setFilter(form, *s.Filter)
	}
	v, err := h.request(ctx, s, "subscribe", form, opt.VerifyTimeout)
	if err != nil {
		return Subscription{}, err
	}
	s.Lease, s.Verified = v.lease, h.cfg.Now()
	h.mu.Lock()
	h.subs[s.ID] = &s
	h.mu.Unlock()
	h.cfg.Logger.Info("subscribed", "sub", s.ID, "topic", topic, "hub", hub, "lease", s.Lease)
	return s, nil
}

// Restore makes the Handler accept deliveries for a subscription made
// earlier (by another process, say) without asking the hub again.
func (h *Handler) Restore(s Subscription) {
	s.Callback = h.CallbackFor(s.ID)
	h.mu.Lock()
	h.subs[s.ID] = &s
	h.mu.Unlock()
}

// Lookup returns the subscription with id.
func (h *Handler) Lookup(id string) (Subscription, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.subs[id]; s != nil {
		return *s, true
	}
	return Subscription{}, false
}

// Unsubscribe asks the hub to end subscription id and waits for the
// verification. Deliveries for it are refused from then on.
func (h *Handler) Unsubscribe(ctx context.Context, id string, timeout time.Duration) error {
	s, ok := h.Lookup(id)
	if !ok {
		return fmt.Errorf("subscriber: no subscription %q", id)
	}
	form := url.Values{"hub.mode": {"unsubscribe"}, "hub.topic": {s.Topic}, "hub.callback": {s.Callback}}
	if _, err := h.request(ctx, s, "unsubscribe", form, timeout); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.subs, id)
	h.mu.Unlock()
	h.cfg.Logger.Info("unsubscribed", "sub", id, "topic", s.Topic)
	return nil
}

// request registers the intent, POSTs form to the hub and waits for the
// verification.
func (h *Handler) request(ctx context.Context, s Subscription, mode string, form url.Values, timeout time.Duration) (verdict, error) {
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	in := &intent{mode: mode, topic: s.Topic, sub: s, result: make(chan verdict, 1)}
	h.mu.Lock()
	h.pending[s.ID] = in
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.pending[s.ID] == in {
			delete(h.pending, s.ID)
		}
		h.mu.Unlock()
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Hub, strings.NewReader(form.Encode()))
	if err != nil {
		return verdict{}, fmt.Errorf("subscriber: hub URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return verdict{}, fmt.Errorf("subscriber: %s request: %w", mode, err)
	}
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return verdict{}, &HubError{Status: resp.StatusCode, Reason: strings.TrimSpace(string(reply))}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case v := <-in.result:
		if v.denied != "" {
			return verdict{}, deniedError(v.denied)
		}
		return v, nil
	case <-t.C:
		return verdict{}, fmt.Errorf("subscriber: the hub accepted the %s request but did not verify it within %s (is %s reachable from the hub?)", mode, timeout, s.Callback)
	case <-ctx.Done():
		return verdict{}, ctx.Err()
	}
}

// HubError is a hub's refusal of a subscription request (4xx or 5xx).
type HubError struct {
	Status int
	Reason string // the hub's plain-text explanation
}

// Error returns the status and the hub's reason.
func (e *HubError) Error() string {
	return fmt.Sprintf("subscriber: hub answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Reason)
}

// RenewAt returns when to renew a subscription verified at verified with
// lease: after three quarters of the lease, so a failed renewal has time to
// be retried before the lease ends. A zero lease (the hub said nothing)
// counts as WebSub's suggested default of 10 days.
func RenewAt(verified time.Time, lease time.Duration) time.Time {
	if lease <= 0 {
		lease = 10 * 24 * time.Hour
	}
	return verified.Add(lease * 3 / 4)
}

// KeepAlive renews subscription id before its lease ends, again and again,
// until ctx ends or the hub denies it. A failed renewal is retried after a
// pause of a tenth of the time left (at least a second, at most a minute).
// renewed, when set, is told of each renewal.
func (h *Handler) KeepAlive(ctx context.Context, id string, lease time.Duration, renewed func(Subscription)) error {
	for {
		s, ok := h.Lookup(id)
		if !ok {
			return fmt.Errorf("subscriber: no subscription %q", id)
		}
		at := RenewAt(s.Verified, s.Lease)
		for {
			wait := at.Sub(h.cfg.Now())
			if wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
			ns, err := h.Subscribe(ctx, s.Hub, s.Topic, s.RenewOptions(lease))
			if err == nil {
				if renewed != nil {
					renewed(ns)
				}
				break
			}
			if IsDenied(err) || ctx.Err() != nil {
				return err
			}
			left := s.Expires().Sub(h.cfg.Now())
			pause := min(max(left/10, time.Second), time.Minute)
			h.cfg.Logger.Warn("renewal failed, retrying", "sub", id, "in", pause, "err", err)
			at = h.cfg.Now().Add(pause)
		}
	}
}

// RenewOptions returns the options that subscribe s again as it is, asking
// for lease: same id, secret, scheme and filter (a hub replaces a
// subscription with what its renewal asks, so a renewal that left out the
// scheme or filter would drop them).
func (s Subscription) RenewOptions(lease time.Duration) SubscribeOptions {
	opt := SubscribeOptions{ID: s.ID, Secret: s.Secret, NoSecret: s.Secret == "", Lease: lease, Scheme: s.Scheme}
	if s.Filter != nil {
		opt.Filter = *s.Filter
	}
	return opt
}

// setFilter adds f's subscription parameters to form.
func setFilter(form url.Values, f changefeed.Filter) {
	for _, p := range f.Prefixes {
		form.Add(wire.ParamFilterPrefix, p)
	}
	if len(f.Changes) > 0 {
		cs := make([]string, len(f.Changes))
		for i, c := range f.Changes {
			cs[i] = string(c)
		}
		form.Set(wire.ParamFilterChange, strings.Join(cs, ","))
	}
}

// errNotFound is returned by discovery when nothing announces a channel.
var errNotFound = errors.New("subscriber: no change-notification channel found")
