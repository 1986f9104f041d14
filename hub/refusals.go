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

// Reason names why a door of the hub refused a request: the reason label of
// rshub_publish_rejects_total, and through refusalTable one HTTP status.
type Reason string

// The reasons, in the order of refusalTable.
const (
	ReasonMethod            Reason = "method"
	ReasonContentType       Reason = "content_type"
	ReasonCharset           Reason = "charset"
	ReasonRead              Reason = "read"
	ReasonTooLarge          Reason = "too_large"
	ReasonTooLong           Reason = "too_long"
	ReasonMode              Reason = "mode"
	ReasonNoTopic           Reason = "no_topic"
	ReasonTopic             Reason = "topic"
	ReasonSubscription      Reason = "subscription"
	ReasonCallbackRefused   Reason = "callback_refused"
	ReasonLinks             Reason = "links"
	ReasonInvalid           Reason = "invalid"
	ReasonCapability        Reason = "capability"
	ReasonFuture            Reason = "future"
	ReasonUnauthorized      Reason = "unauthorized"
	ReasonForbidden         Reason = "forbidden"
	ReasonInvalidToken      Reason = "invalid_token"
	ReasonInsufficientScope Reason = "insufficient_scope"
	ReasonOrigin            Reason = "origin"
	ReasonUnverifiedTopic   Reason = "unverified_topic"
	ReasonUnknownChannel    Reason = "unknown_channel"
	ReasonContinuity        Reason = "continuity"
	ReasonFollowed          Reason = "followed"
	ReasonSubHostLimit      Reason = "subscription_host_limit"
	ReasonInvalidTopic      Reason = "invalid_topic"
	ReasonFetch             Reason = "fetch"
	ReasonChannelLimit      Reason = "channel_limit"
	ReasonSubscriptionLimit Reason = "subscription_limit"
	ReasonVerifyQueue       Reason = "verification_queue"
	ReasonUnavailable       Reason = "unavailable"
	ReasonSession           Reason = "session"
	ReasonSessionToken      Reason = "session_token"
	ReasonNoDocument        Reason = "no_document"
	ReasonUpstream          Reason = "upstream"
	ReasonShuttingDown      Reason = "shutting_down"
)

// refusalRow is one line of the table: a reason, its status, and what it
// means to the client.
type refusalRow struct {
	Reason Reason
	Status int
	Means  string
}

// refusalTable is the one table of the hub's refusals (docs/usage.md
// quotes it, and a test keeps the two equal). Every refusal the hub's HTTP
// doors answer is one of these reasons with this status.
func refusalTable() []refusalRow {
	return []refusalRow{
		{ReasonMethod, http.StatusMethodNotAllowed, "the hub URL takes POST (GET shows a note); a hosted topic takes GET or HEAD; `/events` GET"},
		{ReasonContentType, http.StatusUnsupportedMediaType, "a Content-Type other than a form or XML, one that does not parse, or an XML body sent as a form"},
		{ReasonCharset, http.StatusUnsupportedMediaType, "a notification labelled with a charset other than UTF-8"},
		{ReasonRead, http.StatusBadRequest, "the body or the form could not be read"},
		{ReasonTooLarge, http.StatusRequestEntityTooLarge, "a body or form over the limit (`--max-body`)"},
		{ReasonTooLong, http.StatusBadRequest, "a topic, callback or Link URI over its documented length"},
		{ReasonMode, http.StatusBadRequest, "`hub.mode` missing or not subscribe, unsubscribe or publish"},
		{ReasonNoTopic, http.StatusBadRequest, "a publish ping with neither `hub.url` nor `hub.topic`"},
		{ReasonTopic, http.StatusBadRequest, "a topic URI the hub cannot take (not absolute http(s), too long, numeric host); a thin ping to the hub's URL for a Mercure topic (publish it through Mercure)"},
		{ReasonSubscription, http.StatusBadRequest, "a subscription request's parameters (callback, lease, secret, filter, `rshub.*` options)"},
		{ReasonCallbackRefused, http.StatusBadRequest, "a callback the SSRF policy refuses"},
		{ReasonLinks, http.StatusBadRequest, "a fat ping without one Link rel=\"self\" and a Link rel=\"hub\" naming this hub"},
		{ReasonInvalid, http.StatusBadRequest, "a notification that does not parse or validate"},
		{ReasonCapability, http.StatusBadRequest, "a document whose capability is not a change notification"},
		{ReasonFuture, http.StatusBadRequest, "times further ahead of the hub's clock than `--max-clock-skew`"},
		{ReasonUnauthorized, http.StatusUnauthorized, "the channel needs a publisher token and none was sent"},
		{ReasonForbidden, http.StatusForbidden, "a wrong publisher token, or a channel with no publisher trust"},
		{ReasonInvalidToken, http.StatusUnauthorized, "a private channel's publisher or subscriber JWT that does not verify (expired, bad signature, wrong key); `WWW-Authenticate` says why"},
		{ReasonInsufficientScope, http.StatusForbidden, "a valid JWT whose grant (its `mercure.publish` or `mercure.subscribe` claim, or its `authorization_details`) does not cover the topic"},
		{ReasonOrigin, http.StatusForbidden, "a request the `mercureAuthorization` cookie authorises, from a page whose origin is neither the hub's nor one of `--ws-origins`; a `/ws` or `/events` session from such a page"},
		{ReasonUnverifiedTopic, http.StatusForbidden, "the topic's Link headers do not name it and this hub (verified-topic trust)"},
		{ReasonUnknownChannel, http.StatusNotFound, "no channel (or hosted topic) for this topic on this hub"},
		{ReasonContinuity, http.StatusConflict, "the notification overlaps or goes back before the channel's last one"},
		{ReasonFollowed, http.StatusConflict, "the hub follows this channel's Source itself and takes no pings for it"},
		{ReasonSubHostLimit, http.StatusTooManyRequests, "the callback host holds `--max-subscriptions-per-host` subscriptions"},
		{ReasonInvalidTopic, http.StatusBadGateway, "the topic (fetched by the hub) serves a document the hub cannot take"},
		{ReasonFetch, http.StatusBadGateway, "fetching the topic failed or answered an error"},
		{ReasonChannelLimit, http.StatusServiceUnavailable, "`--open-topics` would create more than `--max-open-channels` channels"},
		{ReasonSubscriptionLimit, http.StatusServiceUnavailable, "the hub holds `--max-subscriptions` subscriptions"},
		{ReasonVerifyQueue, http.StatusServiceUnavailable, "too many verifications of intent pending (with Retry-After)"},
		{ReasonUnavailable, http.StatusServiceUnavailable, "the log or the state store did not answer: nothing was stored (with Retry-After)"},
		{ReasonSession, http.StatusBadRequest, "a `/ws`, `/events` or Mercure session's parameters (`channels`, `since`, `since_time`, filters, matchers, `Last-Event-ID`)"},
		{ReasonSessionToken, http.StatusUnauthorized, "a `/ws`, `/events` or Mercure session without the `--ws-token`, or with a wrong one"},
		{ReasonNoDocument, http.StatusNotFound, "no such pull-mode document of the channel (a Change List, an archive page)"},
		{ReasonUpstream, http.StatusServiceUnavailable, "an edge hub's origin did not answer a forwarded publish: nothing was published (with Retry-After)"},
		{ReasonShuttingDown, http.StatusServiceUnavailable, "the hub is shutting down (with Retry-After)"},
	}
}

// status is r's HTTP status in refusalTable.
func (r Reason) status() int {
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
func refuse(r Reason, format string, args ...any) *PublishError {
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
		pe = refuse(ReasonUnavailable, "%s did not answer: nothing was stored; retry in %d seconds", what, retryAfter)
	}
	h.obs.Rejected(pe.Code)
	answer(w, pe)
}

// answer writes a refusal: its status and message, WWW-Authenticate with a
// 401 (the token refusal's when there is one), Retry-After with a 503 (the
// hub's unless the caller set a shorter one).
func answer(w http.ResponseWriter, pe *PublishError) {
	switch {
	case pe.refusal != nil:
		pe.refusal.Header(w.Header())
	case pe.Status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="rshub"`)
	case pe.Status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "":
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	plainError(w, pe.Status, pe.Msg)
}

// Refusals answers the refusals of the doors outside the hub URL (live
// sessions, pull mode, an edge hub's forwarder) as the hub URL answers its
// own: the reason's status from refusalTable, its headers, the message as
// plain text, and a count by reason (rshub_publish_rejects_total).
type Refusals struct {
	// Count, when set, counts each refusal by reason.
	Count func(reason string)
}

// Refuse answers a refusal for reason r with a message.
func (rf Refusals) Refuse(w http.ResponseWriter, r Reason, format string, args ...any) {
	if rf.Count != nil {
		rf.Count(string(r))
	}
	answer(w, refuse(r, format, args...))
}

// plainError writes a plain-text error for developers (WebSub §5.1).
func plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
