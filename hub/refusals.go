package hub

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/rshub/rshub/access"
	"github.com/rshub/rshub/wire"
)

// reason names why the hub refused a request: the reason label of
// rshub_publish_rejects_total, and through refusalTable one HTTP status.
type reason string

// The reasons, in the order of refusalTable.
const (
	reasonMethod            reason = "method"
	reasonContentType       reason = "content_type"
	reasonCharset           reason = "charset"
	reasonRead              reason = "read"
	reasonTooLarge          reason = "too_large"
	reasonTooLong           reason = "too_long"
	reasonMode              reason = "mode"
	reasonNoTopic           reason = "no_topic"
	reasonTopic             reason = "topic"
	reasonSubscription      reason = "subscription"
	reasonCallbackRefused   reason = "callback_refused"
	reasonLinks             reason = "links"
	reasonInvalid           reason = "invalid"
	reasonCapability        reason = "capability"
	reasonFuture            reason = "future"
	reasonUnauthorized      reason = "unauthorized"
	reasonForbidden         reason = "forbidden"
	reasonInvalidToken      reason = "invalid_token"
	reasonInsufficientScope reason = "insufficient_scope"
	reasonOrigin            reason = "origin"
	reasonUnverifiedTopic   reason = "unverified_topic"
	reasonUnknownChannel    reason = "unknown_channel"
	reasonContinuity        reason = "continuity"
	reasonFollowed          reason = "followed"
	reasonSubHostLimit      reason = "subscription_host_limit"
	reasonInvalidTopic      reason = "invalid_topic"
	reasonFetch             reason = "fetch"
	reasonChannelLimit      reason = "channel_limit"
	reasonSubscriptionLimit reason = "subscription_limit"
	reasonVerifyQueue       reason = "verification_queue"
	reasonUnavailable       reason = "unavailable"
)

// refusalRow is one line of the table: a reason, its status, and what it
// means to the client.
type refusalRow struct {
	Reason reason
	Status int
	Means  string
}

// refusalTable is the one table of the hub's refusals (docs/usage.md
// quotes it, and a test keeps the two equal). Every refusal the hub's HTTP
// doors answer is one of these reasons with this status.
func refusalTable() []refusalRow {
	return []refusalRow{
		{reasonMethod, http.StatusMethodNotAllowed, "the hub URL takes POST (GET shows a note); a hosted topic takes GET or HEAD"},
		{reasonContentType, http.StatusUnsupportedMediaType, "a Content-Type other than a form or XML, one that does not parse, or an XML body sent as a form"},
		{reasonCharset, http.StatusUnsupportedMediaType, "a notification labelled with a charset other than UTF-8"},
		{reasonRead, http.StatusBadRequest, "the body or the form could not be read"},
		{reasonTooLarge, http.StatusRequestEntityTooLarge, "a body or form over the limit (`--max-body`)"},
		{reasonTooLong, http.StatusBadRequest, "a topic, callback or Link URI over its documented length"},
		{reasonMode, http.StatusBadRequest, "`hub.mode` missing or not subscribe, unsubscribe or publish"},
		{reasonNoTopic, http.StatusBadRequest, "a publish ping with neither `hub.url` nor `hub.topic`"},
		{reasonTopic, http.StatusBadRequest, "a topic URI the hub cannot take (not absolute http(s), too long, numeric host)"},
		{reasonSubscription, http.StatusBadRequest, "a subscription request's parameters (callback, lease, secret, filter, `rshub.*` options)"},
		{reasonCallbackRefused, http.StatusBadRequest, "a callback the SSRF policy refuses"},
		{reasonLinks, http.StatusBadRequest, "a fat ping without one Link rel=\"self\" and a Link rel=\"hub\" naming this hub"},
		{reasonInvalid, http.StatusBadRequest, "a notification that does not parse or validate"},
		{reasonCapability, http.StatusBadRequest, "a document whose capability is not a change notification"},
		{reasonFuture, http.StatusBadRequest, "times further ahead of the hub's clock than `--max-clock-skew`"},
		{reasonUnauthorized, http.StatusUnauthorized, "the channel needs a publisher token and none was sent"},
		{reasonForbidden, http.StatusForbidden, "a wrong publisher token, or a channel with no publisher trust"},
		{reasonInvalidToken, http.StatusUnauthorized, "a private channel's publisher or subscriber JWT that does not verify (expired, bad signature, wrong key); `WWW-Authenticate` says why"},
		{reasonInsufficientScope, http.StatusForbidden, "a valid JWT whose `mercure.publish` or `mercure.subscribe` claim does not cover the topic"},
		{reasonOrigin, http.StatusForbidden, "a request the `mercureAuthorization` cookie authorises, from a page whose origin is neither the hub's nor one of `--ws-origins`"},
		{reasonUnverifiedTopic, http.StatusForbidden, "the topic's Link headers do not name it and this hub (verified-topic trust)"},
		{reasonUnknownChannel, http.StatusNotFound, "no channel (or hosted topic) for this topic on this hub"},
		{reasonContinuity, http.StatusConflict, "the notification overlaps or goes back before the channel's last one"},
		{reasonFollowed, http.StatusConflict, "the hub follows this channel's Source itself and takes no pings for it"},
		{reasonSubHostLimit, http.StatusTooManyRequests, "the callback host holds `--max-subscriptions-per-host` subscriptions"},
		{reasonInvalidTopic, http.StatusBadGateway, "the topic (fetched by the hub) serves a document the hub cannot take"},
		{reasonFetch, http.StatusBadGateway, "fetching the topic failed or answered an error"},
		{reasonChannelLimit, http.StatusServiceUnavailable, "`--open-topics` would create more than `--max-open-channels` channels"},
		{reasonSubscriptionLimit, http.StatusServiceUnavailable, "the hub holds `--max-subscriptions` subscriptions"},
		{reasonVerifyQueue, http.StatusServiceUnavailable, "too many verifications of intent pending (with Retry-After)"},
		{reasonUnavailable, http.StatusServiceUnavailable, "the log or the state store did not answer: nothing was stored (with Retry-After)"},
	}
}

// status is r's HTTP status in refusalTable.
func (r reason) status() int {
	for _, row := range refusalTable() {
		if row.Reason == r {
			return row.Status
		}
	}
	return http.StatusInternalServerError // a reason missing from the table: TestRefusalTable fails
}

// PublishError is a refused request: its reason (the label of
// rshub_publish_rejects_total), HTTP status (the reason's, from
// refusalTable) and a message for the client.
type PublishError struct {
	Status int
	Code   string
	Msg    string
	// refusal, when set, is the token refusal the error stands for: its
	// WWW-Authenticate header goes with the answer.
	refusal *access.Refusal
}

func (e *PublishError) Error() string { return e.Msg }

// refuse is a refusal for reason with a message.
func refuse(r reason, format string, args ...any) *PublishError {
	return &PublishError{Status: r.status(), Code: string(r), Msg: fmt.Sprintf(format, args...)}
}

// writeRefusal answers err: a refusal with its status and message (a 401
// with WWW-Authenticate), anything else as 503 with Retry-After (the log
// or the store did not answer). Either is counted by reason.
func (h *Hub) writeRefusal(w http.ResponseWriter, err error) {
	var pe *PublishError
	if !errors.As(err, &pe) {
		what := "the hub"
		var u *unavailableError
		if errors.As(err, &u) {
			what = u.what
		}
		h.logger.Error("request failed", "err", wire.Clip(err.Error()))
		pe = refuse(reasonUnavailable, "%s did not answer: nothing was stored; retry in %d seconds", what, retryAfter)
	}
	h.obs.Rejected(pe.Code)
	switch {
	case pe.refusal != nil:
		pe.refusal.Header(w.Header())
	case pe.Status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="rshub"`)
	case pe.Status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	plainError(w, pe.Status, pe.Msg)
}

// plainError writes a plain-text error for developers (WebSub §5.1).
func plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
