package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/internal/netguard"
	"github.com/rshub/rshub/wire"
)

// maxSecret is WebSub's bound: hub.secret MUST be less than 200 bytes.
const maxSecret = 200

// verifyJob is one pending verification of intent.
type verifyJob struct {
	mode     string // subscribe or unsubscribe
	topic    string
	callback string
	secret   string
	lease    int64
	scheme   string
	filter   *changefeed.Filter
	coalesce string
	rate     float64
	// door is what the door step resolved of a subscribe request
	// (door.Authorized: the subscriber showed a token covering a private
	// channel's topic, and the lease ends with the token)
	door Door
	// givenID is the SubscriptionID of the request's own spelling of the
	// topic and callback (subscriptionRequest.GivenID)
	givenID string
}

// subscriptionRequest is a parsed hub.mode=subscribe|unsubscribe request.
type subscriptionRequest struct {
	Mode     string
	Topic    string
	Callback string
	Secret   string
	Lease    int64
	Scheme   string             // wire.ParamSignatureScheme; "" is WebSub's
	Filter   *changefeed.Filter // wire.ParamFilterPrefix, wire.ParamFilterChange; nil: every entry
	Coalesce string             // wire.ParamCoalesce; "" is the hub's setting
	Rate     float64            // wire.ParamRate; 0 is the hub's default
	// GivenID is the SubscriptionID of the topic and callback as the
	// request spelled them: a subscription stored before topics and
	// callbacks were normalised has it.
	GivenID string
}

// parseSubscription checks a subscribe or unsubscribe form against WebSub
// §5.1 and the lease policy. Unknown parameters are ignored.
func parseSubscription(form url.Values, leases LeasePolicy) (subscriptionRequest, error) {
	r := subscriptionRequest{
		Mode:     form.Get("hub.mode"),
		Topic:    form.Get("hub.topic"),
		Callback: form.Get("hub.callback"),
		Secret:   form.Get("hub.secret"),
	}
	if r.Mode != "subscribe" && r.Mode != "unsubscribe" {
		return r, fmt.Errorf("hub.mode must be subscribe or unsubscribe, got %q", r.Mode)
	}
	if r.Callback == "" {
		return r, errors.New("hub.callback is required")
	}
	if err := checkLen("hub.callback", r.Callback, MaxCallbackLen); err != nil {
		return r, err
	}
	if err := checkLen("hub.topic", r.Topic, MaxTopicLen); err != nil {
		return r, err
	}
	// one spelling of each URL from here on (WebSub §5.1.1, RFC 3986 §6.2.2)
	callback, err := wire.NormalizeURL(r.Callback)
	if err != nil {
		return r, fmt.Errorf("hub.callback: %w", err)
	}
	r.GivenID, r.Callback = SubscriptionID(r.Topic, r.Callback), callback
	if err := checkHTTPURL(r.Callback); err != nil {
		return r, fmt.Errorf("hub.callback: %w", err)
	}
	if r.Topic == "" {
		return r, errors.New("hub.topic is required")
	}
	if r.Topic, err = topicOf("hub.topic", r.Topic); err != nil {
		return r, err
	}
	if len(r.Secret) >= maxSecret {
		return r, fmt.Errorf("hub.secret must be less than %d bytes, got %d", maxSecret, len(r.Secret))
	}
	r.Scheme = form.Get(wire.ParamSignatureScheme)
	if !wire.ValidScheme(r.Scheme) {
		return r, fmt.Errorf("%s must be %s, %s or %s, got %q", wire.ParamSignatureScheme, wire.SchemeWebSub, wire.SchemeStandard, wire.SchemeBoth, wire.Clip(r.Scheme))
	}
	if r.Scheme != "" && r.Secret == "" && r.Mode == "subscribe" {
		return r, fmt.Errorf("%s=%s asks for signed deliveries: it needs a hub.secret", wire.ParamSignatureScheme, wire.Clip(r.Scheme))
	}
	if strings.HasPrefix(r.Secret, wire.StandardSecretPrefix) {
		if _, err := wire.StandardKey(r.Secret); err != nil {
			return r, fmt.Errorf("hub.secret: %w", err)
		}
	}
	switch r.Coalesce = form.Get(wire.ParamCoalesce); r.Coalesce {
	case "", wire.CoalesceOn, wire.CoalesceOff:
	default:
		return r, fmt.Errorf("%s must be %s or %s, got %q", wire.ParamCoalesce, wire.CoalesceOn, wire.CoalesceOff, wire.Clip(r.Coalesce))
	}
	if v, ok := form[wire.ParamRate]; ok {
		if len(v) != 1 {
			return r, fmt.Errorf("%s must be given once, got %d values", wire.ParamRate, len(v))
		}
		rate, err := ParseRate(v[0])
		if err != nil {
			return r, err
		}
		r.Rate = rate
	}
	f, err := changefeed.ParseFilter(form[wire.ParamFilterPrefix], form[wire.ParamFilterChange])
	if err != nil {
		return r, fmt.Errorf("rshub.filter.%w", err) // the error starts with the role: prefix or change
	}
	if !f.IsZero() {
		r.Filter = &f
	}
	if r.Mode == "subscribe" {
		lease, err := leases.Grant(form.Get("hub.lease_seconds"))
		if err != nil {
			return r, err
		}
		r.Lease = lease
	}
	return r, nil
}

// checkHTTPURL accepts absolute http and https URLs without user info
// whose host is not a numeric spelling other software reads as another
// address (netguard.CheckHost).
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q carries user info", raw)
	}
	if why := netguard.HostRefusal(u.Hostname()); why != "" {
		return errors.New(why)
	}
	return nil
}

// handleSubscription answers a subscribe/unsubscribe request: 202 and a
// verification of intent queued, or 4xx with the reason.
func (h *Hub) handleSubscription(w http.ResponseWriter, r *http.Request, form url.Values) {
	req, err := parseSubscription(form, h.cfg.Leases)
	if err != nil {
		var pe *PublishError
		if !errors.As(err, &pe) {
			pe = refuse(ReasonSubscription, "%v", err)
		}
		h.writeRefusal(w, pe)
		return
	}
	if h.cfg.CallbackCheck != nil {
		// refuse now what the dialler would refuse later, when it can be
		// decided now; the dialler still checks every address it dials
		if err := h.cfg.CallbackCheck(r.Context(), req.Callback); err != nil {
			h.writeRefusal(w, refuse(ReasonCallbackRefused, "hub.callback refused: %v", err))
			return
		}
	}
	if err := h.admitSubscription(r.Context(), req); err != nil {
		h.writeRefusal(w, unavailable("the state store", err))
		return
	}
	j := verifyJob{mode: req.Mode, topic: req.Topic, callback: req.Callback, secret: req.Secret, lease: req.Lease, scheme: req.Scheme, filter: req.Filter, coalesce: req.Coalesce, rate: req.Rate, givenID: req.GivenID}
	if req.Mode == "subscribe" { // an unsubscribe needs no grant: its verification of intent is its proof
		d, err := h.enter(r.Context(), r, access.Subscribe, req.Topic)
		if err != nil {
			h.writeRefusal(w, err)
			return
		}
		j.door, j.lease = d, leaseUntil(j.lease, h.cfg.Now(), d.Grant.Expires)
	}
	select {
	case h.verifyq <- j:
	default:
		h.writeRefusal(w, refuse(ReasonVerifyQueue, "too many pending verifications; retry in %d seconds", retryAfter))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, req.Mode+" request accepted; verification of intent follows\n")
}

// runVerify performs the policy check, the denial or the verification of
// intent, and applies the result.
func (h *Hub) runVerify(ctx context.Context, j verifyJob) {
	logger := h.logger.With("mode", j.mode, "topic", wire.Clip(j.topic), "callback", wire.Clip(j.callback))
	ch, format, err := h.subscriptionChannel(ctx, j)
	if errors.Is(err, errPhantom) {
		h.phantomVerify(ctx, logger, j)
		return
	}
	if err != nil && j.mode == "subscribe" {
		reason := "topic is not served by this hub"
		var pe *PublishError
		switch {
		case errors.As(err, &pe):
			reason = pe.Msg
		case !errors.Is(err, ErrNotFound):
			reason = "hub error; try again later"
			logger.Error("channel lookup", "err", err)
		}
		if h.holdsActive(ctx, j) {
			// deny only what the request asked: the callback's own
			// subscription stays, and its owner is not told otherwise
			logger.Info("denial not sent: the callback holds an active subscription to the topic that this request could not change", "reason", reason)
			return
		}
		h.deny(ctx, j.callback, j.topic, reason)
		return
	}
	// A subscriber may treat itself as subscribed as soon as it has echoed
	// the challenge, so the subscription starts at the log's end as it was
	// before the verification request: nothing published meanwhile is missed.
	var startSeq uint64
	if j.mode == "subscribe" {
		_, last, err := h.cfg.Log.Bounds(ctx)
		if err != nil {
			logger.Error("subscribe: log bounds", "err", err)
			return
		}
		startSeq = last + 1
	}
	challenge := newChallenge()
	ok, why := h.verifyIntent(ctx, j, challenge)
	h.obs.Verified(j.mode, ok)
	if !ok {
		logger.Info("verification of intent failed; state unchanged", "reason", why)
		return
	}
	if j.mode == "unsubscribe" {
		h.applyUnsubscribe(ctx, logger, j)
		return
	}
	h.applySubscribe(ctx, logger, j, ch, format, startSeq)
}

// dropSubscription deletes the subscription id, if it exists, and stops
// its deliveries.
func (h *Hub) dropSubscription(ctx context.Context, id string) error {
	unlock, err := h.lockSub(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if err := h.cfg.Store.DeleteSubscription(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if h.cfg.Activator != nil {
		h.cfg.Activator.Deactivate(id)
	}
	return nil
}

// dropLegacy deletes the subscription stored under givenID, the
// SubscriptionID of a request's own spelling of its topic and callback,
// when that is not id, the one of their normal spelling: a subscription
// made before topics and callbacks were normalised, which a request in
// the same spelling unsubscribes or replaces.
func (h *Hub) dropLegacy(ctx context.Context, givenID, id string) error {
	if givenID == "" || givenID == id {
		return nil
	}
	return h.dropSubscription(ctx, givenID)
}

// verifyIntent sends the verification GET and checks that the callback
// echoed the challenge with a 2xx status.
func (h *Hub) verifyIntent(ctx context.Context, j verifyJob, challenge string) (bool, string) {
	q := url.Values{}
	q.Set("hub.mode", j.mode)
	q.Set("hub.topic", j.topic)
	q.Set("hub.challenge", challenge)
	if j.mode == "subscribe" {
		q.Set("hub.lease_seconds", strconv.FormatInt(j.lease, 10))
	}
	body, status, err := h.callbackGET(ctx, j.callback, q, len(challenge)+1)
	if err != nil {
		return false, err.Error()
	}
	if status < 200 || status > 299 {
		return false, fmt.Sprintf("callback answered %d", status)
	}
	if string(body) != challenge {
		return false, "callback did not echo the challenge"
	}
	return true, ""
}

// deny tells the subscriber its subscription was refused (WebSub §5.2).
func (h *Hub) deny(ctx context.Context, callback, topic, reason string) {
	q := url.Values{}
	q.Set("hub.mode", "denied")
	q.Set("hub.topic", topic)
	q.Set("hub.reason", reason)
	if _, _, err := h.callbackGET(ctx, callback, q, 0); err != nil {
		h.logger.Info("denial not delivered", "callback", wire.Clip(callback), "err", err)
	}
	h.logger.Info("subscription denied", "topic", wire.Clip(topic), "callback", wire.Clip(callback), "reason", reason)
}

// callbackGET sends a GET to callback with q appended to its own query
// string and returns at most limit bytes of the body.
func (h *Hub) callbackGET(ctx context.Context, callback string, q url.Values, limit int) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	target := appendQuery(callback, q)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("callback request: %w", err)
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("callback: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("callback body: %w", err)
	}
	return body, resp.StatusCode, nil
}

// appendQuery appends q to rawURL's query string, keeping the parameters it
// already has (WebSub §5.3: existing parameters are not overwritten).
func appendQuery(rawURL string, q url.Values) string {
	frag := ""
	if i := strings.IndexByte(rawURL, '#'); i >= 0 {
		rawURL, frag = rawURL[:i], rawURL[i:]
	}
	sep := "?"
	if strings.Contains(rawURL, "?") {
		sep = "&"
		if strings.HasSuffix(rawURL, "?") || strings.HasSuffix(rawURL, "&") {
			sep = ""
		}
	}
	return rawURL + sep + q.Encode() + frag
}

// newChallenge returns a random single-use challenge.
func newChallenge() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
